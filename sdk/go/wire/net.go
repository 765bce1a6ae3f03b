package wire

// Results of the network imports (sdk/ABI.md §1, "Network"). A non-negative result is a handle
// (net_dial) or a byte count (net_read, net_write; 0 from net_read is the end of the stream).
const (
	// NetError: the operation failed; net_error returns the message.
	NetError int32 = -1
	// NetWouldBlock: nothing could be read or written within the wait the guest gave.
	NetWouldBlock int32 = -2
)

// NetImports are the names of the network imports of module "wasmconnect".
var NetImports = []string{"net_dial", "net_read", "net_write", "net_close", "net_error"}
