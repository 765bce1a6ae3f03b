package fuel_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmconnect/wasmconnect/wasmhost/internal/fuel"
)

// spinWasm is (module (func (export "spin") (loop (br 0)))).
var spinWasm = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
	0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: () -> ()
	0x03, 0x02, 0x01, 0x00, // function 0 has type 0
	0x07, 0x08, 0x01, 0x04, 's', 'p', 'i', 'n', 0x00, 0x00, // export "spin"
	0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // loop br 0 end end
}

// A guest that never returns is stopped at its deadline, and its instance
// is closed.
func Example() {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx) // no WithCloseOnContextDone needed
	defer r.Close(ctx)
	if _, err := fuel.Instantiate(ctx, r); err != nil {
		log.Fatal(err)
	}

	// Instrument once, when the module is loaded; cache the result.
	wasm, err := fuel.Instrument(spinWasm, api.CoreFeaturesV2)
	if err != nil {
		log.Fatal(err)
	}
	mod, err := r.Instantiate(ctx, wasm)
	if err != nil {
		log.Fatal(err)
	}
	meter, err := fuel.NewMeter(mod)
	if err != nil {
		log.Fatal(err)
	}
	defer meter.Close()

	// Before every call.
	meter.Start(time.Now().Add(50 * time.Millisecond))
	_, err = mod.ExportedFunction("spin").Call(ctx)
	fmt.Println(errors.Is(err, fuel.ErrCPUBudgetExceeded), mod.IsClosed())
	// Output: true true
}
