//! Bytes kept for the length of one TRANSFORM_CHAIN call, which the chain's records borrow.
//!
//! The records of a batch mostly share their schema: a HoistField or InsertField in a chain gives
//! every record the same schema JSON. A record that owned its copy would cost an allocation and a
//! free per record and step; with `Keep` the steps store the JSON once per call and every record
//! borrows it, for as long as the records live (they are encoded and dropped before the call ends).
//!
//! The payloads a step writes per record are the other allocation per record: `buffer` and
//! `recycle` hand the buffers of one call's records to the steps of the next.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The spare buffers `buffer` hands out: the payloads of the records of the calls before, given
/// back by `recycle`. A chain step that writes a new payload per record (HoistField) would
/// otherwise cost an allocation and a free per record; the guest's linear memory never shrinks,
/// so holding the buffers of one batch costs no memory the batch did not already take.
struct Spares {
    bufs: Vec<Vec<u8>>,
    bytes: usize,
}

thread_local! {
    // A const initializer: no lazy-initialization check on each access, which is two per record.
    static SPARES: RefCell<Spares> = const { RefCell::new(Spares { bufs: Vec::new(), bytes: 0 }) };
}

/// The most bytes of spare buffers held, and the largest buffer held: a batch of a few thousand
/// records of a few hundred bytes.
const SPARE_BYTES: usize = 2 << 20;
const SPARE_MAX: usize = 4096;

/// An empty buffer with room for at least `cap` bytes: a spare one if there is one.
pub fn buffer(cap: usize) -> Vec<u8> {
    let spare = SPARES.with(|s| {
        let mut s = s.borrow_mut();
        let b = s.bufs.pop()?;
        s.bytes -= b.capacity();
        Some(b)
    });
    match spare {
        Some(mut b) => {
            b.reserve(cap);
            b
        }
        None => Vec::with_capacity(cap),
    }
}

/// Gives `b` back for `buffer` to hand out again (or frees it, when enough are held).
pub fn recycle(mut b: Vec<u8>) {
    let c = b.capacity();
    if c == 0 || c > SPARE_MAX {
        return;
    }
    SPARES.with(|s| {
        let mut s = s.borrow_mut();
        if s.bytes + c <= SPARE_BYTES {
            b.clear();
            s.bytes += c;
            s.bufs.push(b);
        }
    });
}

/// How many of the last kept byte strings `Keep::bytes` looks at before it keeps another: enough
/// for a chain's steps to alternate between their schemas.
const RECENT: usize = 4;

/// An append-only store of shared byte strings that lives as long as what borrows from it.
///
/// It also carries, from the chain to the step applied to a record and back, whether that record's
/// value is vouched for (`value_vouched`, `vouch_value`).
pub struct Keep {
    kept: RefCell<Vec<Rc<[u8]>>>,
    /// The addresses of the bytes `bytes` kept or found last and the time before: the records of
    /// a batch ask for one schema or two in turn (HoistField's, then the InsertField's after
    /// it), which are then found without a search.
    last: Cell<*const u8>,
    before: Cell<*const u8>,
    call: u64,
    /// Whether the value of the record being transformed is vouched for, as the chain knows it.
    vouched: Cell<bool>,
    /// What the step said of the value it leaves; None: nothing.
    said: Cell<Option<bool>>,
}

/// The `call` of the last Keep made.
static CALLS: AtomicU64 = AtomicU64::new(0);

impl Default for Keep {
    fn default() -> Keep {
        Keep {
            kept: RefCell::default(),
            last: Cell::new(std::ptr::null()),
            before: Cell::new(std::ptr::null()),
            call: CALLS.fetch_add(1, Ordering::Relaxed) + 1,
            vouched: Cell::new(false),
            said: Cell::new(None),
        }
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

    /// Where `b`, bytes a chain's record borrows, are for this call: `call` with their address
    /// and length. Two equal places in one call are the same unchanged bytes; no place is
    /// (0, 0, 0), which a memo can start from.
    pub fn place(&self, b: &[u8]) -> (u64, usize, usize) {
        (self.call, b.as_ptr() as usize, b.len())
    }

    /// Whether the value of the record a step's `apply_mut` is given is vouched for: a `Data::Json`
    /// whose payload is compact JSON of its schema as the SDK writes it, which JsonConverter would
    /// write as it is (no field missing, unknown or repeated, every value of its field's type).
    /// Values a chain is given come from other modules and are not; a step of this module that
    /// writes such a value says so with `vouch_value`, so that TRANSFORM_CONVERT's converter need
    /// not check it again (`Converter::write_vouched_from_connect`).
    pub fn value_vouched(&self) -> bool {
        self.vouched.get()
    }

    /// Says, in `apply_mut`, whether the value the step leaves is vouched for (see
    /// `value_vouched`); a step that changes a record without saying leaves its value unvouched.
    /// A step that does not touch the value says `vouch_value(keep.value_vouched())`.
    pub fn vouch_value(&self, vouched: bool) {
        self.said.set(Some(vouched));
    }

    /// Starts a step's `apply_mut` on a record whose value is vouched for or not (the chain).
    pub(crate) fn begin_step(&self, vouched: bool) {
        self.vouched.set(vouched);
        self.said.set(None);
    }

    /// Whether the value a step changed is vouched for: what it said, else not.
    pub(crate) fn vouched_after_change(&self) -> bool {
        self.said.get().unwrap_or(false)
    }

    /// The bytes of `b`, kept for the lifetime of `self`. The steps hold their schema JSON in an
    /// `Rc` (connect::Schema::json), so that one already kept is found by address, without
    /// comparing bytes; a batch whose records share a schema keeps it once.
    pub fn bytes(&self, b: &Rc<[u8]>) -> &[u8] {
        // Only an Rc in `kept` was ever `last` or `before`, and `kept` holds it as long as self
        // lives, so an equal address is that Rc's bytes (even if the caller's copy was dropped).
        let at = b.as_ptr();
        if self.last.get() != at && self.before.get() != at || b.is_empty() {
            let mut kept = self.kept.borrow_mut();
            if !kept.iter().rev().take(RECENT).any(|k| Rc::ptr_eq(k, b)) {
                kept.push(b.clone());
            }
            self.before.set(self.last.get());
            self.last.set(at);
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

    #[test]
    fn recycles_buffers() {
        let mut b = buffer(100);
        b.extend_from_slice(b"payload");
        let at = b.as_ptr();
        recycle(b);
        let again = buffer(50);
        assert!(again.is_empty() && again.capacity() >= 100);
        assert_eq!(again.as_ptr(), at);
        recycle(Vec::with_capacity(SPARE_MAX + 1));
        assert!(buffer(1).capacity() < SPARE_MAX + 1);
    }
}
