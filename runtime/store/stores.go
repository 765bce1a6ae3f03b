package store

import (
	"context"
	"errors"
)

// Stores are the three Kafka-backed stores of a distributed worker.
type Stores struct {
	Config  *ConfigStore
	Offsets *OffsetStore
	Status  *StatusStore
}

// NewStores returns the stores for a worker's internal topics, typically
// from InternalTopicsFrom. Clients are named
// "<ClientIDPrefix>-configs", "-offsets" and "-statuses", as Kafka Connect
// names them after the group.id.
func NewStores(o Options, topics InternalTopics) *Stores {
	return &Stores{
		Config:  NewConfigStore(o, topics.Config),
		Offsets: NewOffsetStore(o, topics.Offsets),
		Status:  NewStatusStore(o, topics.Status),
	}
}

// Start starts the three stores: each creates or checks its topic and reads
// it to the end. If any fails, the others are closed and all errors are
// returned.
func (s *Stores) Start(ctx context.Context) error {
	type starter interface {
		Start(context.Context) error
		Close()
	}
	all := []starter{s.Config, s.Offsets, s.Status}
	errs := make([]error, len(all))
	done := make(chan struct{})
	for i, st := range all {
		go func() {
			errs[i] = st.Start(ctx)
			done <- struct{}{}
		}()
	}
	for range all {
		<-done
	}
	if err := errors.Join(errs...); err != nil {
		for i, st := range all {
			if errs[i] == nil {
				st.Close()
			}
		}
		return err
	}
	return nil
}

// Close closes the three stores.
func (s *Stores) Close() {
	s.Config.Close()
	s.Offsets.Close()
	s.Status.Close()
}
