//! What the SDK needs from the worker: the `wasmconnect` imports (sdk/ABI.md §1) in a module, and
//! stand-ins natively, so that the SDK's own tests run on the build machine.

/// The level of a log line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Trace = 0,
    Debug = 1,
    Info = 2,
    Warn = 3,
    Error = 4,
}

/// Writes a line to the worker log; the host tags it with the connector and task.
pub fn log(level: Level, msg: &str) {
    imp::log(level as i32, msg)
}

/// The stored source offset JSON for a source partition JSON, if one is stored.
pub fn offset_get(partition: &[u8]) -> Result<Option<Vec<u8>>, String> {
    let mut buf = vec![0u8; 256];
    for _ in 0..4 {
        let n = imp::offset_get(partition, &mut buf);
        if n == -1 {
            return Ok(None);
        }
        if n < 0 {
            return Err(format!("offset_get: the host returned {}", n));
        }
        if n as usize <= buf.len() {
            buf.truncate(n as usize);
            return Ok(Some(buf));
        }
        buf = vec![0u8; n as usize];
    }
    Err("offset_get: the host returned -2".to_string())
}

#[cfg(target_arch = "wasm32")]
mod imp {
    #[link(wasm_import_module = "wasmconnect")]
    extern "C" {
        #[link_name = "log"]
        fn host_log(level: i32, ptr: *const u8, len: usize);
        #[link_name = "offset_get"]
        fn host_offset_get(part: *const u8, part_len: usize, out: *mut u8, out_cap: usize) -> i32;
    }

    pub fn log(level: i32, msg: &str) {
        unsafe { host_log(level, msg.as_ptr(), msg.len()) }
    }

    pub fn offset_get(partition: &[u8], out: &mut [u8]) -> i32 {
        unsafe { host_offset_get(partition.as_ptr(), partition.len(), out.as_mut_ptr(), out.len()) }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use std::cell::RefCell;
    use std::collections::HashMap;

    thread_local! {
        static OFFSETS: RefCell<HashMap<Vec<u8>, Vec<u8>>> = RefCell::new(HashMap::new());
        static LOG: RefCell<Vec<(i32, String)>> = RefCell::new(Vec::new());
    }

    pub fn log(level: i32, msg: &str) {
        LOG.with(|l| l.borrow_mut().push((level, msg.to_string())));
    }

    pub fn offset_get(partition: &[u8], out: &mut [u8]) -> i32 {
        OFFSETS.with(|o| match o.borrow().get(partition) {
            None => -1,
            Some(v) => {
                if v.len() <= out.len() {
                    out[..v.len()].copy_from_slice(v);
                }
                v.len() as i32
            }
        })
    }

    /// Native tests: stores an offset for a partition (both JSON).
    pub fn set_offset(partition: &[u8], offset: &[u8]) {
        OFFSETS.with(|o| o.borrow_mut().insert(partition.to_vec(), offset.to_vec()));
    }

    /// Native tests: the log lines so far, taken.
    pub fn take_log() -> Vec<(i32, String)> {
        LOG.with(|l| std::mem::take(&mut *l.borrow_mut()))
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub use imp::{set_offset, take_log};
