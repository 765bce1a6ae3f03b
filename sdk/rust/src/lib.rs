//! The wasmconnect Rust SDK: write Kafka Connect source and sink connectors, converters,
//! transformations and predicates in Rust and run them in the wasmconnect worker as WebAssembly
//! modules. The SDK implements the ABI (sdk/ABI.md): the exports, the descriptor, handles, config
//! checks with Kafka's texts, the record batch codec, errors, logging and stored offsets. It has no
//! dependencies beyond std. See README.md for a complete plugin and how to build it.
//!
//! A module registers its plugins in one function and exports the ABI with `export_module!`:
//!
//! ```ignore
//! fn register(m: &mut wasmconnect::Module) {
//!     m.source(Info { name: "Counter", ... }, CounterConnector);
//! }
//! wasmconnect::export_module!(register);
//! ```

pub mod abi;
pub mod chain;
pub mod config;
pub mod connect;
pub mod context;
pub mod dispatch;
pub mod error;
pub mod host;
pub mod json;
pub mod keep;
pub mod plugin;
pub mod text;
pub mod words;
pub mod wire;

pub use config::{Config, ConfigDef, ConfigType, Errors, Importance};
pub use context::TaskContext;
pub use dispatch::Module;
pub use error::{Error, Result};
pub use host::Level;
pub use chain::Batch;
pub use keep::Keep;
pub use plugin::*;
pub use wire::{Data, Header, Record};

/// Defines the module's ABI exports (`_initialize`, `wc_abi_version`, `wc_alloc`, `wc_free`,
/// `wc_describe`, `wc_call`) for the plugins that `$register`, a `fn(&mut Module)`, adds. Use it
/// once, in the module's crate (a `cdylib`).
///
/// `_initialize` makes the module a reactor, as crt1-reactor.o does for C: it runs the
/// constructors (wasi-libc's, which find the preopened directories) once, when the host
/// instantiates the module. Without it the linker makes a command module, which runs them again
/// around every export call: about 100 µs per call.
#[macro_export]
macro_rules! export_module {
    ($register:path) => {
        #[no_mangle]
        pub extern "C" fn _initialize() {
            extern "C" {
                fn __wasm_call_ctors();
            }
            unsafe { __wasm_call_ctors() }
        }

        #[no_mangle]
        pub extern "C" fn wc_abi_version() -> i32 {
            $crate::abi::VERSION
        }

        #[no_mangle]
        pub extern "C" fn wc_alloc(size: u32) -> u32 {
            $crate::abi::wc_alloc(size)
        }

        #[no_mangle]
        pub extern "C" fn wc_free(ptr: u32, size: u32) {
            $crate::abi::wc_free(ptr, size)
        }

        #[no_mangle]
        pub extern "C" fn wc_describe() -> u64 {
            $crate::abi::wc_describe($register)
        }

        #[no_mangle]
        pub extern "C" fn wc_call(handle: i32, op: i32, ptr: u32, len: u32) -> u64 {
            $crate::abi::wc_call($register, handle, op, ptr, len)
        }
    };
}
