//! Bytes kept for the length of one TRANSFORM_CHAIN call, which the chain's records borrow.
//!
//! The records of a batch mostly share their schema: a HoistField or InsertField in a chain gives
//! every record the same schema JSON. A record that owned its copy would cost an allocation and a
//! free per record and step; with `Keep` the steps store the JSON once per call and every record
//! borrows it, for as long as the records live (they are encoded and dropped before the call ends).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many of the last kept byte strings `Keep::bytes` looks at before it keeps another: enough
/// for a chain's steps to alternate between their schemas.
const RECENT: usize = 4;

/// An append-only store of shared byte strings that lives as long as what borrows from it.
pub struct Keep {
    kept: RefCell<Vec<Rc<[u8]>>>,
    call: u64,
}

/// The `call` of the last Keep made.
static CALLS: AtomicU64 = AtomicU64::new(0);

impl Default for Keep {
    fn default() -> Keep {
        Keep { kept: RefCell::default(), call: CALLS.fetch_add(1, Ordering::Relaxed) + 1 }
    }
}

impl Keep {
    pub fn new() -> Keep {
        Keep::default()
    }

    /// Which call this is (no two Keeps share it). Bytes a chain's records borrow, from the
    /// input or from `self`, stay where they are and unchanged for as long as `self` lives: a
    /// transformation may remember what it derived from them by their address and this number,
    /// and a new number tells it that the call it remembered them from is over.
    pub fn call(&self) -> u64 {
        self.call
    }

    /// The bytes of `b`, kept for the lifetime of `self`. The steps hold their schema JSON in an
    /// `Rc` (connect::Schema::json), so that one already kept is found by address, without
    /// comparing bytes; a batch whose records share a schema keeps it once.
    pub fn bytes(&self, b: &Rc<[u8]>) -> &[u8] {
        let mut kept = self.kept.borrow_mut();
        if !kept.iter().rev().take(RECENT).any(|k| Rc::ptr_eq(k, b)) {
            kept.push(b.clone());
        }
        let p: *const [u8] = &b[..];
        // SAFETY: the bytes are those of an `Rc` in `kept`, which only grows and is dropped with
        // `self`, and an `Rc`'s bytes never move or change; so they stay valid for as long as
        // `self` is borrowed.
        unsafe { &*p }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_recent_rc_once() {
        let k = Keep::new();
        let (a, b): (Rc<[u8]>, Rc<[u8]>) = (Rc::from(&b"schema a"[..]), Rc::from(&b"schema b"[..]));
        assert_eq!(k.bytes(&a), b"schema a");
        assert_eq!(k.bytes(&b), b"schema b");
        assert_eq!(k.bytes(&a), b"schema a");
        assert_eq!(k.kept.borrow().len(), 2);
        let first = k.bytes(&a);
        drop(a);
        // The kept copy outlives the caller's.
        assert_eq!(first, b"schema a");
        for i in 0..RECENT {
            k.bytes(&Rc::from(format!("other {}", i).as_bytes()));
        }
        assert_eq!(k.kept.borrow().len(), 2 + RECENT);
        assert_eq!(first, b"schema a");
        assert_ne!(Keep::new().call(), k.call());
    }
}
