//! The WebAssembly side of the ABI (sdk/ABI.md §1, §2): what the `wc_*` exports that
//! `export_module!` defines call. A module has one thread and the host never calls into an
//! instance from two threads at once, so the state is a plain static.

use crate::dispatch::{Dispatcher, Module};
use crate::error::Error;
use std::alloc::{alloc, dealloc, Layout};

/// The ABI version (sdk/ABI.md §6).
pub const VERSION: i32 = 1;

/// Result bits of the i64 returned by wc_call and wc_describe.
pub const RESULT_ERROR: u32 = 1 << 31;
pub const RESULT_RETRIABLE: u32 = 1 << 30;
/// The largest buffer a result can describe.
pub const MAX_RESULT_LEN: usize = (1 << 30) - 1;

static mut STATE: Option<Dispatcher> = None;
/// The message of the last error result, kept until the next call.
static mut ERROR: Vec<u8> = Vec::new();

#[allow(clippy::missing_safety_doc)]
fn state(register: fn(&mut Module)) -> &'static mut Dispatcher {
    // Safety: a module instance is single-threaded and calls are not reentrant.
    unsafe {
        if STATE.is_none() {
            STATE = Some(Dispatcher::new(register));
        }
        STATE.as_mut().unwrap()
    }
}

/// wc_alloc: a block of `size` bytes for the host to write input into; 0 when out of memory.
pub fn wc_alloc(size: u32) -> u32 {
    if size as usize > MAX_RESULT_LEN {
        return 0;
    }
    match Layout::from_size_align(size.max(1) as usize, 8) {
        Ok(l) => unsafe { alloc(l) as usize as u32 },
        Err(_) => 0,
    }
}

/// wc_free: frees a block from wc_alloc.
pub fn wc_free(ptr: u32, size: u32) {
    if ptr == 0 {
        return;
    }
    if let Ok(l) = Layout::from_size_align(size.max(1) as usize, 8) {
        unsafe { dealloc(ptr as usize as *mut u8, l) }
    }
}

/// wc_describe: the descriptor JSON.
pub fn wc_describe(register: fn(&mut Module)) -> u64 {
    let d = state(register).describe();
    pack(d.as_ptr() as usize as u32, d.len() as u32, 0)
}

/// wc_call: runs operation `op` on object `handle` with the input at `ptr..ptr+len`.
pub fn wc_call(register: fn(&mut Module), handle: i32, op: i32, ptr: u32, len: u32) -> u64 {
    let input: &[u8] = if len == 0 { &[] } else { unsafe { std::slice::from_raw_parts(ptr as usize as *const u8, len as usize) } };
    match state(register).handle(op, handle, input) {
        Ok(out) if out.is_empty() => 0,
        Ok(out) if out.len() > MAX_RESULT_LEN => error_result(&Error::new("result too large for the ABI")),
        Ok(out) => pack(out.as_ptr() as usize as u32, out.len() as u32, 0),
        Err(e) => error_result(&e),
    }
}

fn error_result(e: &Error) -> u64 {
    let mut flags = RESULT_ERROR;
    if e.is_retriable() {
        flags |= RESULT_RETRIABLE;
    }
    let mut msg = e.message();
    if msg.is_empty() {
        msg = "plugin returned an error without a message";
    }
    let msg = &msg.as_bytes()[..msg.len().min(MAX_RESULT_LEN)];
    unsafe {
        ERROR.clear();
        ERROR.extend_from_slice(msg);
        pack(ERROR.as_ptr() as usize as u32, ERROR.len() as u32, flags)
    }
}

fn pack(ptr: u32, len: u32, flags: u32) -> u64 {
    (ptr as u64) << 32 | (len & (MAX_RESULT_LEN as u32) | flags) as u64
}

/// Runs one operation as the host would, for native tests of a module's plugins: the result, or
/// the error the host would see.
pub fn invoke(register: fn(&mut Module), op: i32, handle: i32, input: &[u8]) -> Result<Vec<u8>, Error> {
    state(register).handle(op, handle, input).map(|b| b.to_vec())
}
