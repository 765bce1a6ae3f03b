package logging

import "strings"

// kafkaLoggers maps Kafka Connect's logger names (log4j names: classes and their packages) onto the
// loggers of the packages that do the same work here, so that a runbook or a tool that sets
// org.apache.kafka.connect.runtime.WorkerSourceTask to DEBUG through /admin/loggers gets the debug
// lines of the source task loop. A class under one of these names (…runtime.rest.resources.X) maps
// like the name above it.
var kafkaLoggers = map[string][]string{
	"org.apache.kafka.connect":                                                    {"wasmconnect"},
	"org.apache.kafka.connect.runtime":                                            {"wasmconnect.runtime"},
	"org.apache.kafka.connect.runtime.Worker":                                     {"wasmconnect.runtime.worker"},
	"org.apache.kafka.connect.runtime.WorkerTask":                                 {"wasmconnect.runtime.task"},
	"org.apache.kafka.connect.runtime.WorkerSourceTask":                           {"wasmconnect.runtime.task"},
	"org.apache.kafka.connect.runtime.AbstractWorkerSourceTask":                   {"wasmconnect.runtime.task"},
	"org.apache.kafka.connect.runtime.WorkerSinkTask":                             {"wasmconnect.runtime.task"},
	"org.apache.kafka.connect.runtime.errors":                                     {"wasmconnect.runtime.task"},
	"org.apache.kafka.connect.runtime.distributed":                                {"wasmconnect.runtime.herder", "wasmconnect.runtime.cluster"},
	"org.apache.kafka.connect.runtime.distributed.DistributedHerder":              {"wasmconnect.runtime.herder"},
	"org.apache.kafka.connect.runtime.distributed.WorkerCoordinator":              {"wasmconnect.runtime.cluster"},
	"org.apache.kafka.connect.runtime.distributed.WorkerGroupMember":              {"wasmconnect.runtime.cluster"},
	"org.apache.kafka.connect.runtime.distributed.IncrementalCooperativeAssignor": {"wasmconnect.runtime.cluster"},
	"org.apache.kafka.connect.runtime.standalone":                                 {"wasmconnect.runtime.herder"},
	"org.apache.kafka.connect.runtime.rest":                                       {"wasmconnect.runtime.rest"},
	"org.apache.kafka.connect.runtime.isolation":                                  {"wasmconnect.wasmhost"},
	"org.apache.kafka.connect.storage":                                            {"wasmconnect.runtime.store"},
	"org.apache.kafka.connect.util":                                               {"wasmconnect.runtime"},
}

// ourLoggers returns the loggers here that a Kafka Connect logger name stands for: those of the name
// itself, or of the nearest name above it that has some; nil for a name that is not Kafka's.
func ourLoggers(name string) []string {
	for n := name; strings.HasPrefix(n, "org.apache.kafka.connect"); {
		if ours, ok := kafkaLoggers[n]; ok {
			return ours
		}
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			break
		}
		n = n[:i]
	}
	return nil
}
