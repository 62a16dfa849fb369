//! The input's ranges (pipeline/ranges.rs) decoded by several threads and
//! handed to one consumer in range order.
//!
//! The consumer is the thread that infers (the probe) or routes (the scan).
//! Helpers, `threads - 1` of them, claim ranges in order and decode them
//! into a small queue per range; the consumer takes the head range's
//! records, and while it would wait it decodes a range ahead itself, so
//! every granted core decodes. Because records are consumed strictly in
//! range order, everything downstream (row order, registry, drifts, the
//! first bad record, line numbers) is what one thread reading the files one
//! after the other gives: the thread count only changes who decodes.
//!
//! Budget: `threads` is DuckDB's `threads` setting, so the scan never runs
//! more of our threads than the user granted (one consumer, which is
//! DuckDB's own thread, plus helpers); at `threads = 1` there is no helper.
//! Memory: at most `lookahead` ranges are open at once, each holding one
//! read buffer; a helper's range queues at most `QUEUE_BATCHES` pieces, and
//! the ranges ahead the consumer owns at most `CONSUMER_QUEUE_BATCHES` in all.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::budget::BatchBudget;
use crate::error::{Result, SanitizeError};
use crate::formats::{Batch, RangeFollow, RecordReader, Resume};

pub type SendReader = Box<dyn RecordReader + Send>;

/// The work done on one range, piece by piece, by whichever thread holds
/// it: decoding ([`Decode`], the probe's) or decoding and routing (the
/// scan's, pipeline/scanner.rs).
pub trait RangeWork: Send + 'static {
    /// One piece of the range's output (a reused buffer).
    type Out: Default + Send + 'static;
    /// Fills `out` with the next piece; false when the range is done.
    fn step(&mut self, out: &mut Self::Out) -> Result<bool>;
    /// [`Self::step`] when the consumer is idle, waiting for this very
    /// range: a work may leave part of its piece for the consumer to do
    /// (the scan's routing), so that one unsplittable range still keeps two
    /// cores busy.
    fn step_for_idle_consumer(&mut self, out: &mut Self::Out) -> Result<bool> {
        self.step(out)
    }
    /// Bytes the range owned, once done.
    fn bytes_read(&self) -> u64;
    /// Lines the range consumed, once done (see `RecordReader::lines_read`).
    fn lines_read(&self) -> u64;
    /// See `RecordReader::guessed_start`.
    fn guessed_start(&self) -> Option<u64> {
        None
    }
    /// See `RecordReader::follow`.
    fn follow(&self) -> RangeFollow {
        RangeFollow::Unknown
    }
}

/// Opens the work of range `i`; with a [`Resume`], reading starts there,
/// a record boundary known for certain (the opener ignores it for a range
/// that starts its file).
pub type Opener<W> = dyn Fn(usize, Option<Resume>) -> Result<W> + Send + Sync;

/// Decoding a range into batches of records.
pub struct Decode {
    reader: SendReader,
    budget: BatchBudget,
    /// `bigquery_profile`: reshape each batch (value/reshape.rs), with
    /// this space reused.
    reshape: Option<Vec<crate::value::Node>>,
    /// Top-level keys whose values are not needed (projection pushdown).
    skip: Option<Arc<crate::formats::json::SkipKeys>>,
    /// The probe's board of shapes it needs no more (value/shape.rs).
    shapes: Option<Arc<crate::value::shape::ShapeBoard>>,
}

impl Decode {
    pub fn new(reader: SendReader, memory_limit: Option<u64>) -> Self {
        Decode { reader, budget: BatchBudget::new(memory_limit), reshape: None, skip: None, shapes: None }
    }

    /// Leaves undecoded the records whose shapes are on `board` (the
    /// probe's; never with reshaping, whose shapes are the reshaped ones).
    pub fn knowing_shapes(mut self, board: Option<Arc<crate::value::shape::ShapeBoard>>) -> Self {
        self.shapes = board.filter(|_| self.reshape.is_none());
        self
    }

    /// Reads the values of these top-level keys for their syntax only
    /// (formats/json.rs, `SkipKeys`).
    pub fn skipping(mut self, skip: Option<Arc<crate::formats::json::SkipKeys>>) -> Self {
        self.skip = skip;
        self
    }

    /// Reshapes every batch for BigQuery (`bigquery_profile`).
    pub fn reshaping(mut self, on: bool) -> Self {
        self.reshape = on.then(Vec::new);
        self
    }
}

impl RangeWork for Decode {
    type Out = Batch;

    fn step(&mut self, batch: &mut Batch) -> Result<bool> {
        batch.clear();
        let same = match (&batch.skip, &self.skip) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        if !same {
            batch.skip.clone_from(&self.skip);
        }
        let same_board = match (&batch.known_shapes, &self.shapes) {
            (Some(a), Some(b)) => Arc::ptr_eq(a.board(), b),
            (a, b) => a.is_none() && b.is_none(),
        };
        if !same_board {
            batch.known_shapes = self.shapes.clone().map(crate::formats::json_shape::KnownShapes::new);
        }
        let n = self.reader.next_batch(batch, self.budget.records())?;
        if let Some(scratch) = self.reshape.as_mut() {
            batch.list_nulls_dropped = crate::value::reshape_for_bigquery(&mut batch.tape, scratch);
        }
        self.budget.observe(batch);
        Ok(n > 0)
    }

    fn bytes_read(&self) -> u64 {
        self.reader.bytes_read()
    }

    fn lines_read(&self) -> u64 {
        self.reader.lines_read()
    }

    fn guessed_start(&self) -> Option<u64> {
        self.reader.guessed_start()
    }

    fn follow(&self) -> RangeFollow {
        self.reader.follow()
    }
}

/// The reader of a range with no records to decode (a Parquet file whose
/// footer said everything the probe needs).
pub struct NoRecords;

impl RecordReader for NoRecords {
    fn next_batch(&mut self, _batch: &mut Batch, _max_records: usize) -> Result<usize> {
        Ok(0)
    }
    fn bytes_read(&self) -> u64 {
        0
    }
}

/// Pieces queued per range before its helper waits.
const QUEUE_BATCHES: usize = 4;

/// Pieces the consumer decodes ahead into the one range ahead it owns,
/// while a helper has the head: enough to hold a small file or range
/// whole, so that when it becomes the head its work is mostly done instead
/// of being left for the consumer alone.
const CONSUMER_QUEUE_BATCHES: usize = 16;

/// Emptied batches kept for reuse; more are dropped.
const SPARE_BATCHES: usize = 8;

/// What [`OrderedReader::next`] gives, always in range order.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// A piece of range `range` is in the caller's buffer.
    Piece { range: usize },
    /// Range `range` is done: the bytes it owned and the lines it consumed.
    RangeEnd { range: usize, bytes_read: u64, lines: u64 },
}

/// One item of a range's queue.
enum Item<T> {
    Piece(T),
    End { bytes_read: u64, lines: u64, follow: RangeFollow },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Owner {
    Nobody,
    Helper,
    Consumer,
}

struct Slot<T> {
    items: VecDeque<Result<Item<T>>>,
    owner: Owner,
    /// The guessed start of the range's first record (a CSV range), set
    /// when it is opened, before any item; checked and cleared when the
    /// range becomes the head.
    guess: Option<u64>,
    /// The certain place the consumer (re)opens the range at: after a
    /// wrong guess, or to go on after a cut (`RangeFollow::Cut`).
    reopen: Option<Resume>,
    /// The helper working on it must drop its work (a wrong guess).
    discard: bool,
}

struct State<T> {
    slots: Vec<Slot<T>>,
    /// Ranges are claimed in order: every range below this one is claimed.
    next_unclaimed: usize,
    /// The range the consumer is on.
    head: usize,
    /// Helpers waiting for a range to claim (they take priority over the
    /// consumer for unclaimed ranges, so that one unsplittable file is still
    /// decoded by a helper while the consumer works on its records).
    idle_helpers: usize,
    cancelled: bool,
    /// Emptied buffers, reused by whoever works next.
    spare: Vec<T>,
    /// The consumer is waiting for the head range's next piece.
    consumer_waiting: bool,
}

struct Shared<W: RangeWork> {
    state: Mutex<State<W::Out>>,
    changed: Condvar,
    opener: Box<Opener<W>>,
    /// Ranges at or past `head + lookahead` are not claimed yet.
    lookahead: usize,
}

impl<W: RangeWork> Shared<W> {
    fn lock(&self) -> MutexGuard<'_, State<W::Out>> {
        // A panicking decoder is caught before it can poison the lock; if
        // one ever did, the state is still consistent (every update is one
        // statement), so carry on with it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, guard: MutexGuard<'a, State<W::Out>>) -> MutexGuard<'a, State<W::Out>> {
        self.changed.wait(guard).unwrap_or_else(|p| p.into_inner())
    }
}

/// A range being worked on.
struct Worker<W: RangeWork> {
    work: W,
}

impl<W: RangeWork> Worker<W> {
    /// Opens a range's work. A panic while opening (a decoder's
    /// constructor) is an error in the range's place, like a panic while
    /// stepping: a helper thread must never die holding a claimed range,
    /// or the consumer would wait for it forever.
    fn open(shared: &Shared<W>, range: usize, at: Option<Resume>) -> Result<Worker<W>> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (shared.opener)(range, at))) {
            Ok(work) => Ok(Worker { work: work? }),
            Err(_) => Err(SanitizeError::internal("a decoder panicked while opening its input")),
        }
    }

    /// The next piece of the range in `out`, or the range's end. A panic in
    /// a decoder is an error here, never an unwinding thread.
    fn step(&mut self, out: W::Out) -> Result<Item<W::Out>> {
        self.step_as(out, false)
    }

    fn step_as(&mut self, mut out: W::Out, consumer_idle: bool) -> Result<Item<W::Out>> {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if consumer_idle {
                self.work.step_for_idle_consumer(&mut out)
            } else {
                self.work.step(&mut out)
            }
        }));
        match run {
            Ok(Ok(true)) => Ok(Item::Piece(out)),
            Ok(Ok(false)) => Ok(Item::End {
                bytes_read: self.work.bytes_read(),
                lines: self.work.lines_read(),
                follow: self.work.follow(),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(SanitizeError::internal("a decoder panicked")),
        }
    }
}

fn recycle<T>(state: &mut State<T>, buffer: T) {
    if state.spare.len() < SPARE_BATCHES {
        state.spare.push(buffer);
    }
}

fn is_last<T>(item: &Result<Item<T>>) -> bool {
    !matches!(item, Ok(Item::Piece(_)))
}

pub struct OrderedReader<W: RangeWork> {
    shared: Arc<Shared<W>>,
    helpers: Vec<JoinHandle<()>>,
    /// Ranges the consumer works on itself: the head, or ranges ahead it
    /// took on while a helper had the head.
    own: HashMap<usize, Worker<W>>,
    /// Where the record after the last finished range starts
    /// (`RangeFollow::At`), which the next range's guessed start must be.
    resume: Option<u64>,
}

impl<W: RangeWork> OrderedReader<W> {
    /// Reads `ranges` ranges through `opener` with `threads` threads in all
    /// (the caller's plus `threads - 1` helpers, never more helpers than
    /// ranges).
    pub fn new(ranges: usize, threads: usize, opener: Box<Opener<W>>) -> Self {
        let threads = threads.max(1);
        let helpers = (threads - 1).min(ranges);
        let slots = (0..ranges)
            .map(|_| Slot { items: VecDeque::new(), owner: Owner::Nobody, guess: None, reopen: None, discard: false })
            .collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                slots,
                next_unclaimed: 0,
                head: 0,
                idle_helpers: helpers,
                cancelled: false,
                spare: Vec::new(),
                consumer_waiting: false,
            }),
            changed: Condvar::new(),
            opener,
            lookahead: threads + 1,
        });
        let mut started = Vec::with_capacity(helpers);
        for _ in 0..helpers {
            let mine: Arc<Shared<W>> = Arc::clone(&shared);
            let spawned = std::thread::Builder::new().name("sanitize-decode".into()).spawn(move || helper(&mine));
            match spawned {
                Ok(handle) => started.push(handle),
                Err(_) => {
                    // Fewer threads than asked: the consumer decodes more.
                    let mut state = shared.lock();
                    state.idle_helpers -= 1;
                }
            }
        }
        OrderedReader { shared, helpers: started, own: HashMap::new(), resume: None }
    }

    /// The next step in range order, with a piece swapped into `batch`
    /// (its old contents are recycled); `None` once every range is done.
    /// An error is the earliest failure in range order.
    pub fn next(&mut self, batch: &mut W::Out) -> Result<Option<Step>> {
        let shared = Arc::clone(&self.shared);
        let mut state = shared.lock();
        loop {
            let head = state.head;
            if head >= state.slots.len() || state.cancelled {
                return Ok(None);
            }
            // A guessed start is checked before anything of its range is
            // given out: right when the previous range's records ended
            // there, else the range is read again from where they did.
            if let Some(guess) = state.slots[head].guess {
                if self.resume == Some(guess) {
                    state.slots[head].guess = None;
                } else {
                    let Some(offset) = self.resume else {
                        return Err(SanitizeError::internal("a range with a guessed start follows no range end"));
                    };
                    self.restart(&shared, &mut state, head, Resume { offset, line: 1, bytes: 0 });
                    continue;
                }
            }
            if let Some(item) = state.slots[head].items.pop_front() {
                if let Ok(Item::End { follow: RangeFollow::Cut(at), .. }) = &item {
                    // The range's guess held: the consumer reads on from
                    // the record it was cut at.
                    let slot = &mut state.slots[head];
                    slot.reopen = Some(*at);
                    slot.owner = Owner::Nobody;
                    continue;
                }
                let last = is_last(&item);
                if last {
                    state.head += 1;
                    if let Ok(Item::End { follow, .. }) = &item {
                        self.resume = match *follow {
                            RangeFollow::At(offset) => Some(offset),
                            RangeFollow::AsBefore => self.resume,
                            RangeFollow::Unknown | RangeFollow::Cut(_) => None,
                        };
                    }
                }
                shared.changed.notify_all();
                recycle(&mut state, std::mem::take(batch));
                drop(state);
                return self.deliver(head, item, batch);
            }
            match state.slots[head].owner {
                Owner::Nobody if state.idle_helpers == 0 || state.slots[head].reopen.is_some() => {
                    // Opened by the consumer once the range before it is
                    // done: where its records ended is certain.
                    let at = state.slots[head].reopen.take().or(self.resume.map(|offset| Resume {
                        offset,
                        line: 1,
                        bytes: 0,
                    }));
                    state.slots[head].owner = Owner::Consumer;
                    state.next_unclaimed = state.next_unclaimed.max(head + 1);
                    drop(state);
                    let opened = Worker::open(&shared, head, at);
                    state = shared.lock();
                    match opened {
                        Ok(w) => {
                            state.slots[head].guess = w.work.guessed_start();
                            self.own.insert(head, w);
                        }
                        Err(e) => {
                            state.head += 1;
                            shared.changed.notify_all();
                            return Err(e);
                        }
                    }
                }
                // An idle helper is about to take it.
                Owner::Nobody => state = shared.wait(state),
                Owner::Consumer => {
                    let spare = state.spare.pop().unwrap_or_default();
                    drop(state);
                    let Some(worker) = self.own.get_mut(&head) else {
                        return Err(SanitizeError::internal("a range of the consumer has no decoder"));
                    };
                    let item = worker.step(spare);
                    if is_last(&item) {
                        self.own.remove(&head);
                    }
                    // Through the queue, so that a range end is handled in
                    // one place (a cut, the next range's start).
                    state = shared.lock();
                    state.slots[head].items.push_back(item);
                }
                Owner::Helper => match self.help_ahead(&shared, state) {
                    Ok(s) => state = s,
                    Err(mut s) => {
                        s.consumer_waiting = true;
                        state = shared.wait(s);
                        state.consumer_waiting = false;
                    }
                },
            }
        }
    }

    /// Drops what was read of range `range` from a wrong guess and has the
    /// consumer read it again from `at`. A helper still on it drops its
    /// work when it next queues a piece.
    fn restart(&mut self, shared: &Shared<W>, state: &mut State<W::Out>, range: usize, at: Resume) {
        let slot = &mut state.slots[range];
        slot.guess = None;
        slot.reopen = Some(at);
        let mut finished = false;
        let mut pieces = Vec::new();
        for item in slot.items.drain(..) {
            finished |= is_last(&item);
            if let Ok(Item::Piece(piece)) = item {
                pieces.push(piece);
            }
        }
        if slot.owner == Owner::Helper && !finished {
            slot.discard = true;
        } else {
            slot.owner = Owner::Nobody;
            self.own.remove(&range);
        }
        for piece in pieces {
            recycle(state, piece);
        }
        shared.changed.notify_all();
    }

    /// While a helper has the head range: decodes one batch of a range
    /// ahead (one the consumer already owns, or the next unclaimed one when
    /// no helper is idle), so the consumer's core decodes instead of
    /// waiting. `Err` gives the lock back when there is nothing to do.
    #[allow(clippy::type_complexity)]
    fn help_ahead<'a>(
        &mut self,
        shared: &'a Shared<W>,
        mut state: MutexGuard<'a, State<W::Out>>,
    ) -> std::result::Result<MutexGuard<'a, State<W::Out>>, MutexGuard<'a, State<W::Out>>> {
        let limit = (state.head + shared.lookahead).min(state.slots.len());
        // At most one range ahead is the consumer's at a time (it bounds
        // the memory of its deeper queue).
        let ahead = state.head + 1..state.next_unclaimed.min(limit);
        // Pieces queued in every range ahead the consumer owns, finished
        // ones included: together they stay within one deep queue.
        let queued: usize = ahead
            .clone()
            .filter(|&r| state.slots[r].owner == Owner::Consumer)
            .map(|r| state.slots[r].items.len())
            .sum();
        if queued >= CONSUMER_QUEUE_BATCHES {
            return Err(state);
        }
        let owned = ahead.clone().find(|&r| {
            let slot = &state.slots[r];
            slot.owner == Owner::Consumer && !slot.items.back().is_some_and(is_last) && self.own.contains_key(&r)
        });
        let range = match owned {
            Some(r) => r,
            None if state.idle_helpers == 0 && state.next_unclaimed < limit => {
                let r = state.next_unclaimed;
                state.next_unclaimed += 1;
                state.slots[r].owner = Owner::Consumer;
                drop(state);
                let opened = Worker::open(shared, r, None);
                state = shared.lock();
                match opened {
                    Ok(w) => {
                        state.slots[r].guess = w.work.guessed_start();
                        self.own.insert(r, w);
                    }
                    Err(e) => state.slots[r].items.push_back(Err(e)),
                }
                return Ok(state);
            }
            None => return Err(state),
        };
        let spare = state.spare.pop().unwrap_or_default();
        drop(state);
        let item = match self.own.get_mut(&range) {
            Some(worker) => worker.step(spare),
            None => Err(SanitizeError::internal("a range of the consumer has no decoder")),
        };
        if is_last(&item) {
            self.own.remove(&range);
        }
        let mut state = shared.lock();
        state.slots[range].items.push_back(item);
        Ok(state)
    }

    fn deliver(&mut self, range: usize, item: Result<Item<W::Out>>, out: &mut W::Out) -> Result<Option<Step>> {
        match item? {
            Item::Piece(piece) => {
                *out = piece;
                Ok(Some(Step::Piece { range }))
            }
            Item::End { bytes_read, lines, .. } => Ok(Some(Step::RangeEnd { range, bytes_read, lines })),
        }
    }
}

/// A helper: claims the next range within the lookahead, decodes it into
/// its queue (waiting while the queue is full), and again, until no range
/// is left or the reader is dropped.
fn helper<W: RangeWork>(shared: &Shared<W>) {
    let _quiet = crate::quiet::enter();
    loop {
        let range = {
            let mut state = shared.lock();
            loop {
                if state.cancelled || state.next_unclaimed >= state.slots.len() {
                    return;
                }
                if state.next_unclaimed < state.head + shared.lookahead {
                    let r = state.next_unclaimed;
                    state.next_unclaimed += 1;
                    state.slots[r].owner = Owner::Helper;
                    state.idle_helpers -= 1;
                    // The consumer may now take on a range ahead itself.
                    shared.changed.notify_all();
                    break r;
                }
                state = shared.wait(state);
            }
        };
        let mut worker = match Worker::open(shared, range, None) {
            Ok(w) => {
                shared.lock().slots[range].guess = w.work.guessed_start();
                Some(w)
            }
            Err(e) => {
                let mut state = shared.lock();
                state.slots[range].items.push_back(Err(e));
                None
            }
        };
        while let Some(w) = worker.as_mut() {
            let (spare, consumer_idle) = {
                let mut state = shared.lock();
                let idle = state.consumer_waiting && state.head == range;
                (state.spare.pop().unwrap_or_default(), idle)
            };
            let item = w.step_as(spare, consumer_idle);
            let last = is_last(&item);
            let mut state = shared.lock();
            while state.slots[range].items.len() >= QUEUE_BATCHES && !state.cancelled && !state.slots[range].discard {
                state = shared.wait(state);
            }
            if state.cancelled {
                return;
            }
            if state.slots[range].discard {
                // Its guessed start was wrong: the consumer reads it again.
                let slot = &mut state.slots[range];
                slot.discard = false;
                slot.owner = Owner::Nobody;
                if let Ok(Item::Piece(piece)) = item {
                    recycle(&mut state, piece);
                }
                shared.changed.notify_all();
                worker = None;
                continue;
            }
            state.slots[range].items.push_back(item);
            shared.changed.notify_all();
            if last {
                worker = None;
            }
        }
        let mut state = shared.lock();
        state.idle_helpers += 1;
        shared.changed.notify_all();
    }
}

impl<W: RangeWork> Drop for OrderedReader<W> {
    fn drop(&mut self) {
        // Helpers waiting on a full queue or for a range wake up and leave;
        // no thread of ours outlives the scan.
        {
            let mut state = self.shared.lock();
            state.cancelled = true;
            self.shared.changed.notify_all();
        }
        for handle in self.helpers.drain(..) {
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::RecordMeta;
    use crate::value::Node;

    /// A reader of `count` records numbered from `first`, `per_batch` at a
    /// time; `fail_at` makes the batch holding that record an error.
    struct Numbers {
        next: u64,
        end: u64,
        per_batch: u64,
        fail_at: Option<u64>,
    }

    impl RecordReader for Numbers {
        fn next_batch(&mut self, batch: &mut Batch, max: usize) -> Result<usize> {
            let n = self.per_batch.min(max as u64).min(self.end - self.next);
            if let Some(f) = self.fail_at.filter(|&f| f >= self.next && f < self.next + n) {
                return Err(SanitizeError::input(format!("record {f} is broken")));
            }
            for _ in 0..n {
                batch.tape.roots.push(batch.tape.nodes.len() as u32);
                batch.tape.nodes.push(Node::Null);
                batch.meta.push(RecordMeta { line: self.next, byte: 0, error: None });
                self.next += 1;
            }
            Ok(n as usize)
        }
        fn bytes_read(&self) -> u64 {
            self.next
        }
        fn lines_read(&self) -> u64 {
            self.next
        }
    }

    /// Range i holds records 100*i .. 100*i + sizes[i].
    fn read_all(sizes: &[u64], threads: usize, fail_at: Option<u64>) -> (Vec<u64>, Vec<Step>, Option<String>) {
        let sizes_owned = sizes.to_vec();
        let opener: Box<Opener<Decode>> = Box::new(move |i, _| {
            let first = 100 * i as u64;
            Ok(Decode::new(Box::new(Numbers { next: first, end: first + sizes_owned[i], per_batch: 3, fail_at }), None))
        });
        let mut reader = OrderedReader::new(sizes.len(), threads, opener);
        let (mut records, mut ends) = (Vec::new(), Vec::new());
        let mut batch = Batch::default();
        loop {
            match reader.next(&mut batch) {
                Ok(Some(Step::Piece { .. })) => records.extend(batch.meta.iter().map(|m| m.line)),
                Ok(Some(end)) => ends.push(end),
                Ok(None) => return (records, ends, None),
                Err(e) => return (records, ends, Some(e.message)),
            }
        }
    }

    #[test]
    fn every_thread_count_gives_the_records_in_range_order() {
        let sizes = [7, 0, 12, 1, 30, 5, 0, 9];
        let (expected, ends, _) = read_all(&sizes, 1, None);
        let sequential: Vec<u64> =
            sizes.iter().enumerate().flat_map(|(i, &n)| (0..n).map(move |k| 100 * i as u64 + k)).collect();
        assert_eq!(expected, sequential);
        assert_eq!(ends.len(), sizes.len());
        for threads in [2, 3, 4, 8, 16] {
            for _ in 0..20 {
                let (got, got_ends, err) = read_all(&sizes, threads, None);
                assert_eq!(got, expected, "threads {threads}");
                assert_eq!(got_ends, ends, "threads {threads}");
                assert!(err.is_none());
            }
        }
    }

    #[test]
    fn the_first_failure_in_range_order_is_the_one_reported() {
        // Records 205 (range 2) and 401 (range 4) both fail: 205 wins at
        // every thread count, and no record after it is delivered.
        for threads in [1, 2, 4, 8] {
            for _ in 0..20 {
                let sizes = [7, 3, 12, 1, 30];
                let opener_fail = |i: usize| match i {
                    2 => Some(205),
                    4 => Some(401),
                    _ => None,
                };
                let opener: Box<Opener<Decode>> = Box::new(move |i, _| {
                    let first = 100 * i as u64;
                    let numbers = Numbers { next: first, end: first + sizes[i], per_batch: 3, fail_at: opener_fail(i) };
                    Ok(Decode::new(Box::new(numbers), None))
                });
                let mut reader = OrderedReader::new(sizes.len(), threads, opener);
                let mut batch = Batch::default();
                let mut last = 0;
                let err = loop {
                    match reader.next(&mut batch) {
                        Ok(Some(Step::Piece { .. })) => last = batch.meta[batch.len() - 1].line,
                        Ok(Some(_)) => {}
                        Ok(None) => panic!("no failure"),
                        Err(e) => break e.message,
                    }
                };
                assert!(err.contains("record 205"), "threads {threads}: {err}");
                assert_eq!(last, 202, "threads {threads}");
            }
        }
    }

    #[test]
    fn a_panic_while_opening_a_range_is_an_error_in_its_place_not_a_hang() {
        for threads in [1, 2, 4] {
            let opener: Box<Opener<Decode>> = Box::new(|i, _| {
                if i == 2 {
                    panic!("constructor failed");
                }
                let first = 100 * i as u64;
                Ok(Decode::new(Box::new(Numbers { next: first, end: first + 5, per_batch: 2, fail_at: None }), None))
            });
            let _quiet = crate::quiet::enter();
            let mut reader = OrderedReader::new(5, threads, opener);
            let mut batch = Batch::default();
            let mut seen = Vec::new();
            let err = loop {
                match reader.next(&mut batch) {
                    Ok(Some(Step::Piece { .. })) => seen.extend(batch.meta.iter().map(|m| m.line)),
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("no error"),
                    Err(e) => break e.message,
                }
            };
            assert!(err.contains("panicked while opening"), "threads {threads}: {err}");
            assert_eq!(seen, [0, 1, 2, 3, 4, 100, 101, 102, 103, 104], "threads {threads}");
        }
    }

    #[test]
    fn dropping_the_reader_early_stops_every_helper() {
        let (_, _, _) = read_all(&[1000; 8], 4, None);
        let opener: Box<Opener<Decode>> = Box::new(|i, _| {
            let numbers = Numbers { next: 0, end: 1_000_000 * (i as u64 + 1), per_batch: 50, fail_at: None };
            Ok(Decode::new(Box::new(numbers), None))
        });
        let mut reader = OrderedReader::new(8, 4, opener);
        let mut batch = Batch::default();
        assert!(matches!(reader.next(&mut batch), Ok(Some(Step::Piece { .. }))));
        drop(reader); // joins the helpers: returns only when they are gone
    }
}
