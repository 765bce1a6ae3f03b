# Connectors as code: `make run` (wasmconnect dev with examples/dev.properties, connectors.dir =
# examples/connectors) keeps the worker's connectors equal to the blocks of this directory's *.hcl
# files. Edit a file and the worker updates that connector; delete it and the worker deletes it.
#
#   seq 1 100 | sed 's/^/order-/' > data/files/orders.txt
#   cat data/files/orders-out.txt
#   curl -s http://127.0.0.1:8083/reconciler
#
# Variables are shared by the directory's files; set them with WASMCONNECT_VAR_<name>.
variable "files" {
  description = "Where plugins may read and write (the worker's plugin.fs.allow)."
  default     = "data/files"
}

connector "example-orders-source" {
  class     = "FileStreamSource"
  tasks_max = 1
  config = {
    # Plugins see files by their absolute path: abspath() resolves against the worker's directory.
    file  = abspath("${var.files}/orders.txt")
    topic = "example-orders"
  }
}
