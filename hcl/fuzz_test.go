package hcl

import "testing"

// Worker files and connector files are the operator's input, often generated: no file may panic the
// parser or the evaluation of its expressions; a bad one is an error.

func FuzzParseWorkerConfig(f *testing.F) {
	f.Add([]byte("group_id = \"connect-cluster\"\nbootstrap_servers = [\"a:9092\", \"b:9092\"]\nproperties = { \"key.converter.schemas.enable\" = \"false\" }\n"))
	f.Add([]byte("plugin_path = [\"build/plugins\"]\noffset_flush_interval_ms = 1000\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		ParseWorkerConfig(src, "fuzz.hcl")
	})
}

func FuzzParseConnectors(f *testing.F) {
	f.Add([]byte(`variable "files" { default = "data" }
connector "src" {
  class     = "FileStreamSource"
  tasks_max = 1
  config = { file = "${var.files}/in.txt", topic = "t" }
  transform "mask" { type = "MaskField$Value", fields = ["a", "b"] }
  errors { tolerance = "all" }
}`))
	f.Add([]byte(`connector "snk" { class = "FileStreamSink", state = "paused", config = { topics = ["t"], file = env("HOME") } }`))
	dir := f.TempDir()
	noEnv := func(string) (string, bool) { return "", false }
	f.Fuzz(func(t *testing.T, src []byte) {
		ParseConnectors([]File{{Name: "fuzz.hcl", Src: src}}, Options{LookupEnv: noEnv, WorkDir: dir})
	})
}
