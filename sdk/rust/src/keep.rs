//! Bytes kept for the length of one TRANSFORM_CHAIN call, which the chain's records borrow.
//!
//! The records of a batch mostly share their schema: a HoistField or InsertField in a chain gives
//! every record the same schema JSON. A record that owned its copy would cost an allocation and a
//! free per record and step; with `Keep` the steps store the JSON once per call and every record
//! borrows it, for as long as the records live (they are encoded and dropped before the call ends).

use std::cell::RefCell;

use crate::words;

/// How many of the last kept byte strings `Keep::bytes` compares with before it keeps another
/// copy: enough for a chain's steps to alternate between their schemas.
const RECENT: usize = 4;

/// An append-only store of byte strings that lives as long as what borrows from it.
#[derive(Default)]
pub struct Keep {
    kept: RefCell<Vec<Box<[u8]>>>,
}

impl Keep {
    pub fn new() -> Keep {
        Keep::default()
    }

    /// `b` kept for the lifetime of `self`: a string equal to one of the last few kept is shared,
    /// so that a batch whose records share a schema keeps it once.
    pub fn bytes(&self, b: &[u8]) -> &[u8] {
        let mut kept = self.kept.borrow_mut();
        let found = kept.iter().rev().take(RECENT).position(|k| words::same(k, b));
        let i = match found {
            Some(back) => kept.len() - 1 - back,
            None => {
                kept.push(b.into());
                kept.len() - 1
            }
        };
        let p: *const [u8] = &*kept[i];
        // SAFETY: the boxed slice is on the heap, never changed and never dropped before `self`
        // (`kept` only grows; moving a Box in the vector does not move what it points to), so
        // the slice is valid for as long as `self` is borrowed.
        unsafe { &*p }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_recent_equal_bytes() {
        let k = Keep::new();
        let a = k.bytes(b"schema a");
        let b = k.bytes(b"schema b");
        assert_eq!(a, b"schema a");
        assert_eq!(b, b"schema b");
        assert!(std::ptr::eq(k.bytes(b"schema a"), a));
        assert!(std::ptr::eq(k.bytes(b"schema b"), b));
        assert_eq!(k.kept.borrow().len(), 2);
        for i in 0..RECENT {
            k.bytes(format!("other {}", i).as_bytes());
        }
        // No longer among the recent ones: kept again, and the first copy is still valid.
        assert!(!std::ptr::eq(k.bytes(b"schema a"), a));
        assert_eq!(a, b"schema a");
    }
}
