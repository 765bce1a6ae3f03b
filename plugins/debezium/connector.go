package main

import (
	"errors"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
	"github.com/wasmconnect/wasmconnect/sdk/go/configdef"
)

type connector struct{}

func (connector) Validate(cfg sdk.Config) map[string][]string {
	if _, err := parseSettings(cfg); err != nil {
		var ce *configdef.Error
		if errors.As(err, &ce) {
			return map[string][]string{ce.Key: {ce.Msg}}
		}
		return map[string][]string{"": {err.Error()}}
	}
	return nil
}

// TaskConfigs returns one task whatever tasks.max says, as Debezium's PostgreSQL connector: one
// replication slot is read by one process.
func (connector) TaskConfigs(cfg sdk.Config, _ int) ([]sdk.Config, error) {
	return []sdk.Config{cfg.Clone()}, nil
}

func (connector) NewTask() sdk.SourceTask { return &task{} }
