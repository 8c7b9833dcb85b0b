//! Memory-events tests. With the `memory-events` feature the counters, callbacks and visitor
//! must be exact for this test's own block (other tests allocate on other threads meanwhile,
//! so the block is recognised by a request size no other test uses); without it every call
//! must report the subsystem off.

use crate::memory_events::{self, unwrapped, ChangeKind};
use crate::HeapScope;

#[cfg(not(feature = "memory-events"))]
#[test]
fn without_the_feature_every_call_reports_the_subsystem_off() {
    assert!(!memory_events::available());
    assert!(!memory_events::set_enabled(true));
    assert!(!memory_events::enabled());
    assert!(memory_events::snapshot().is_err());
    assert!(memory_events::set_callback(ChangeKind::Allocate, |_| {}).is_err());
    assert!(memory_events::visit(|_, _| true).is_err());
}

#[cfg(feature = "memory-events")]
#[test]
fn counters_callbacks_and_visitor_see_exactly_this_block() {
    use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    const SIZE: usize = 123_457;
    assert!(memory_events::available());
    memory_events::set_enabled(true);
    assert!(memory_events::enabled());

    #[derive(Default)]
    struct Seen {
        allocates: AtomicUsize,
        address: AtomicUsize,
        resizes: AtomicUsize,
        resize_delta: AtomicI64,
        frees: AtomicUsize,
        free_delta: AtomicI64,
        // Filled by the callback itself: allocating inside a callback must neither recurse
        // nor be dispatched.
        notes: Mutex<Vec<String>>,
    }
    let seen = Arc::new(Seen::default());

    let s = Arc::clone(&seen);
    memory_events::set_callback(ChangeKind::Allocate, move |c| {
        if c.request_size == SIZE as u64 {
            s.allocates.fetch_add(1, Ordering::SeqCst);
            s.address.store(c.address as usize, Ordering::SeqCst);
            s.notes
                .lock()
                .unwrap()
                .push(format!("allocate {}", c.request_size));
        }
    })
    .unwrap();
    let s = Arc::clone(&seen);
    memory_events::set_callback(ChangeKind::Resize, move |c| {
        if c.request_size == 2 * SIZE as u64 {
            s.resizes.fetch_add(1, Ordering::SeqCst);
            s.resize_delta.store(c.delta_bytes, Ordering::SeqCst);
            s.address.store(c.address as usize, Ordering::SeqCst);
        }
    })
    .unwrap();
    let s = Arc::clone(&seen);
    memory_events::set_callback(ChangeKind::Free, move |c| {
        if c.address as usize == s.address.load(Ordering::SeqCst) {
            s.frees.fetch_add(1, Ordering::SeqCst);
            s.free_delta.store(c.delta_bytes, Ordering::SeqCst);
        }
    })
    .unwrap();

    let mut block: Vec<u8> = Vec::with_capacity(SIZE);
    let usable = unsafe { HeapScope::usable_size(block.as_ptr()) };
    assert_eq!(seen.allocates.load(Ordering::SeqCst), 1);
    assert_eq!(seen.address.load(Ordering::SeqCst), block.as_ptr() as usize);
    assert_eq!(seen.notes.lock().unwrap().len(), 1);
    let now = memory_events::snapshot().unwrap();
    assert!(now.enabled);
    assert!(now.live_bytes >= usable as u64 && now.live_count >= 1);
    assert!(now.peak_live_bytes >= now.live_bytes);
    let mut found = 0usize;
    memory_events::visit(|address, size| {
        if address as *const u8 == block.as_ptr() {
            found = size;
        }
        true
    })
    .unwrap();
    assert_eq!(found, usable);

    // Growing is one resize, whether the block moves or not; its internal allocation is not an
    // allocate event.
    block.reserve_exact(2 * SIZE);
    let grown = unsafe { HeapScope::usable_size(block.as_ptr()) };
    assert_eq!(seen.resizes.load(Ordering::SeqCst), 1);
    assert_eq!(
        seen.resize_delta.load(Ordering::SeqCst),
        grown as i64 - usable as i64
    );
    assert_eq!(seen.allocates.load(Ordering::SeqCst), 1);

    drop(block);
    assert_eq!(seen.frees.load(Ordering::SeqCst), 1);
    assert_eq!(seen.free_delta.load(Ordering::SeqCst), -(grown as i64));

    for kind in [ChangeKind::Allocate, ChangeKind::Free, ChangeKind::Resize] {
        memory_events::clear_callback(kind).unwrap();
    }
    // The callbacks are gone: another block of the same size is not seen.
    drop(Vec::<u8>::with_capacity(SIZE));
    assert_eq!(seen.allocates.load(Ordering::SeqCst), 1);
    // The closures were dropped: only this test holds the counters now.
    assert_eq!(Arc::strong_count(&seen), 1);
}

#[test]
fn unwrapped_memory_comes_from_the_os_not_the_allocator() {
    let p = unwrapped::alloc(10_000, 64);
    assert!(!p.is_null());
    assert_eq!(p as usize % 64, 0);
    assert!(!HeapScope::owns(p));
    unsafe {
        for i in 0..10_000 {
            *p.add(i) = (i % 251) as u8;
        }
        let q = unwrapped::realloc(p, 200_000, 64);
        assert!(!q.is_null());
        for i in 0..10_000 {
            assert_eq!(*q.add(i), (i % 251) as u8);
        }
        assert!(unwrapped::realloc(q, 0, 64).is_null());
    }
    assert!(unwrapped::alloc(16, 3).is_null());
}
