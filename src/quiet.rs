//! Which threads are running our code, so that the process-wide panic hook
//! (installed by the FFI layer) can keep our panics off the host's stderr:
//! they become DuckDB errors instead.

use std::cell::Cell;

thread_local! {
    static OURS: Cell<bool> = const { Cell::new(false) };
}

/// Marks this thread as running extension code until the guard drops.
pub fn enter() -> QuietGuard {
    QuietGuard { outer: OURS.with(|c| c.replace(true)) }
}

pub fn is_ours() -> bool {
    OURS.with(Cell::get)
}

pub struct QuietGuard {
    outer: bool,
}

impl Drop for QuietGuard {
    fn drop(&mut self) {
        let outer = self.outer;
        OURS.with(|c| c.set(outer));
    }
}
