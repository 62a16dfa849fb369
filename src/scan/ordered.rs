//! The input's ranges (scan/ranges.rs) decoded by several threads and
//! handed to one consumer in range order.
//!
//! The consumer is the thread that infers (the probe) or routes (the scan).
//! A range's work is stepped one piece at a time by whichever thread is
//! free: helpers, `threads - 1` of them, step the earliest open range
//! while the queues have room, or open the next one; the consumer takes the head
//! range's pieces, steps the head itself when nobody else is on it, and
//! while it would wait steps a range ahead. No range is tied to a thread,
//! so when the consumer is the slow side (DuckDB's sink behind it) the
//! helpers do all the decoding, and when the helpers are, the consumer
//! shares it. Because pieces are queued in the order they were read and
//! consumed strictly in range order, everything downstream (row order,
//! registry, drifts, the first bad record, line numbers) is what one
//! thread reading the files one after the other gives: the thread count
//! only changes who decodes.
//!
//! Budget: `threads` is DuckDB's `threads` setting, so the scan never runs
//! more of our threads than the user granted (one consumer, which is
//! DuckDB's own thread, plus helpers); at `threads = 1` there is no helper.
//! Where DuckDB calls the scan from several of its own threads (insertion
//! order off), those waiting for the consumer's turn step ranges too
//! ([`StepOnce`]): still DuckDB's threads, never more of ours.
//! Memory: at most `lookahead` ranges are open (claimed, not finished) at
//! once, within a window of `WINDOW` ranges from the head (`lookahead`
//! if more), each open one holding one
//! read buffer, and they queue at most `QUEUED_PIECES - 1 + threads`
//! pieces of any size together, more (up to `QUEUED_SMALL_PIECES`) only
//! while those queued hold less than `QUEUED_SMALL_BYTES`, and fewer when
//! `batch_memory_limit_bytes` bounds a piece's size ([`queue_bound`]);
//! emptied pieces are kept for reuse, never more than were alive at once.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::budget::BatchBudget;
use crate::error::{Result, SanitizeError};
use crate::formats::{Batch, RangeFollow, RecordReader, Resume};
use crate::value::flat_shape::{FlatBoard, KnownFlat};

pub type SendReader = Box<dyn RecordReader + Send>;

/// The work done on one range, piece by piece, by whichever thread holds
/// it: decoding ([`Decode`], the probe's) or decoding and routing (the
/// scan's, scan/scanner.rs).
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
    /// Bytes of memory a queued piece holds, for the queues' bound in
    /// bytes ([`QueueBound`]); 0 where unknown (the piece then counts by
    /// number alone).
    fn piece_bytes(_piece: &Self::Out) -> usize {
        0
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
    /// The probe's board of flat shapes it needs no more (value/flat_shape.rs).
    flat_shapes: Option<Arc<FlatBoard>>,
    /// Writes each record's shape for the probe's cache, here rather than
    /// on its one absorbing thread (infer/shapes.rs `ShapeWriter`).
    writer: Option<Arc<crate::infer::ShapeWriter>>,
    shape_scratch: Vec<u8>,
}

impl Decode {
    pub fn new(reader: SendReader, memory_limit: Option<u64>) -> Self {
        Decode {
            reader,
            budget: BatchBudget::new(memory_limit),
            reshape: None,
            skip: None,
            shapes: None,
            flat_shapes: None,
            writer: None,
            shape_scratch: Vec::new(),
        }
    }

    /// Leaves undecoded the flat records (CSV) whose shapes are on `board`
    /// (the probe's; never with reshaping, as [`Decode::knowing_shapes`]).
    pub fn knowing_flat_shapes(mut self, board: Option<Arc<FlatBoard>>) -> Self {
        self.flat_shapes = board.filter(|_| self.reshape.is_none());
        self
    }

    /// Leaves undecoded the records whose shapes are on `board` (the
    /// probe's; never with reshaping, whose shapes are the reshaped ones).
    pub fn knowing_shapes(mut self, board: Option<Arc<crate::value::shape::ShapeBoard>>) -> Self {
        self.shapes = board.filter(|_| self.reshape.is_none());
        self
    }

    /// Writes the shape of every record of each batch into
    /// `Batch::record_shapes` (after reshaping: the reshaped records'
    /// shapes, which are the ones absorbed).
    pub fn writing_shapes(mut self, writer: Option<Arc<crate::infer::ShapeWriter>>) -> Self {
        self.writer = writer;
        self
    }

    /// Reads the values of these top-level keys for their syntax only
    /// (formats/json/mod.rs, `SkipKeys`).
    pub fn skipping(mut self, skip: Option<Arc<crate::formats::json::SkipKeys>>) -> Self {
        self.skip = skip;
        self
    }

    /// The arrow schema and keys of the columns the reader could hand out
    /// whole (`RecordReader::column_schema`).
    pub fn column_schema(&self) -> Option<(arrow::datatypes::SchemaRef, Arc<[String]>)> {
        self.reader.column_schema()
    }

    /// Has the reader hand out its columns whole from now on, reading
    /// those marked in `read` (`RecordReader::emit_columns`); never with
    /// reshaping, which works on the tape.
    pub fn emit_columns(&mut self, read: &[bool]) {
        if self.reshape.is_none() {
            self.reader.emit_columns(read);
        }
    }

    /// One step ([`RangeWork::step`]) of at most `most` records.
    pub fn step_at_most(&mut self, batch: &mut Batch, most: usize) -> Result<bool> {
        batch.clear();
        // What the batch holds from an earlier step is kept when it is this
        // reader's (a board reader's count of looks goes on).
        if !same_arc(batch.skip.as_ref(), self.skip.as_ref()) {
            batch.skip.clone_from(&self.skip);
        }
        if !same_arc(batch.known_shapes.as_ref().map(|k| k.board()), self.shapes.as_ref()) {
            batch.known_shapes = self.shapes.clone().map(crate::formats::json::shape::KnownShapes::new);
        }
        if !same_arc(batch.known_flat.as_ref().map(|k| k.board()), self.flat_shapes.as_ref()) {
            batch.known_flat = self.flat_shapes.clone().map(KnownFlat::new);
        }
        let n = self.reader.next_batch(batch, self.budget.records().min(most))?;
        batch.header_notice = self.reader.take_header_notice();
        if let Some(scratch) = self.reshape.as_mut() {
            batch.list_nulls_dropped = crate::value::reshape_for_bigquery(&mut batch.tape, scratch);
        }
        if let Some(writer) = &self.writer {
            let (records, flat_width) = (batch.len(), batch.flat().map(|keys| keys.len()));
            let (tape, meta) = (&batch.tape, &batch.meta);
            let no_shape = |i: usize| meta[i].error.is_some() || tape.roots[i] == crate::formats::KNOWN_SHAPE;
            writer.write(tape, records, flat_width, no_shape, &mut batch.record_shapes, &mut self.shape_scratch);
        }
        self.budget.observe(batch);
        Ok(n > 0)
    }

    /// Whether `batch_memory_limit_bytes` sizes the batches.
    pub fn budgeted(&self) -> bool {
        self.budget.limited()
    }

    /// Reshapes every batch for BigQuery (`bigquery_profile`).
    pub fn reshaping(mut self, on: bool) -> Self {
        self.reshape = on.then(Vec::new);
        self
    }
}

impl RangeWork for Decode {
    type Out = Batch;

    fn piece_bytes(batch: &Batch) -> usize {
        batch.heap_bytes()
    }

    fn step(&mut self, batch: &mut Batch) -> Result<bool> {
        self.step_at_most(batch, usize::MAX)
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

/// Whether `held` and `wanted` are the same shared value, or both none.
fn same_arc<T: ?Sized>(held: Option<&Arc<T>>, wanted: Option<&Arc<T>>) -> bool {
    match (held, wanted) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (a, b) => a.is_none() && b.is_none(),
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

/// Pieces queued in all open ranges together before the threads stop
/// stepping ranges (the head's next piece aside), whatever their size.
/// DuckDB's Parquet writer takes chunks cheaply until a row group (122,880
/// rows: 60 pieces of 2048) is full and then spends a long while on it on
/// the consumer's thread; a queue this deep lets the helpers go on
/// decoding meanwhile. A bound of 4 pieces per range leaves the helper
/// idle through each such burst: the 300 MB CSV's `COPY` scan at threads
/// = 2 takes 2.42 s with it and 1.81 s with this one (docs/architecture.md
/// "Threads"). Memory: one piece (a routed chunk in a scan, a decoded batch
/// in a probe) each; every thread may queue one more once the others
/// reached the bound, so at most `QUEUED_PIECES - 1 + threads` wait.
const QUEUED_PIECES: usize = 48;

/// Pieces queued at most while those queued hold less than
/// [`QUEUED_SMALL_BYTES`] together. Where the helpers decode faster than
/// DuckDB's writer takes rows (JSON Lines written from their text), 48
/// pieces fill during a row group's write and the helper idles, and the
/// consumer then routes pieces itself between row groups: with room for
/// 128 the helper routes every piece, and the 200 MB bench `COPY`s at
/// threads = 2 take 0.94 s and 1.93 s (JSON Lines, CSV) with 48 pieces and
/// 0.91 s and 1.86 s with 128 (docs/performance.md), for 14-15 MiB more
/// peak memory (43 MiB for the bench's nested Parquet, whose pieces are
/// larger); pieces of large records are held to `QUEUED_PIECES` by the
/// byte bound.
const QUEUED_SMALL_PIECES: usize = 128;
const QUEUED_SMALL_BYTES: usize = 64 << 20;

/// The bound when `batch_memory_limit_bytes` is set: a user who bounds a
/// batch's memory has pieces that may each be as large as that budget
/// (records of megabytes), so the queues hold no more than four pieces for
/// each decoding thread's range and sixteen for the consumer's range ahead
/// would: about 16 at threads = 2.
const QUEUED_PIECES_UNDER_A_BUDGET: usize = 16;

/// How many pieces the open ranges may queue together: `pieces` of any
/// size, and up to `small_pieces` while those queued hold less than
/// `small_bytes` together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueBound {
    pub pieces: usize,
    pub small_pieces: usize,
    pub small_bytes: usize,
}

impl From<usize> for QueueBound {
    /// `pieces` of any size, and no more.
    fn from(pieces: usize) -> Self {
        QueueBound { pieces, small_pieces: pieces, small_bytes: 0 }
    }
}

impl QueueBound {
    /// Whether another piece may be queued after `pieces` holding `bytes`.
    fn has_room(&self, pieces: usize, bytes: usize) -> bool {
        pieces < self.pieces || (pieces < self.small_pieces && bytes < self.small_bytes)
    }
}

/// The queues' bound of a scan or probe. Under a batch memory budget no
/// room is added for small pieces: the user bounds memory there.
pub fn queue_bound(batch_memory_limit: Option<u64>) -> QueueBound {
    if batch_memory_limit.is_some() {
        QUEUED_PIECES_UNDER_A_BUDGET.into()
    } else {
        QueueBound { pieces: QUEUED_PIECES, small_pieces: QUEUED_SMALL_PIECES, small_bytes: QUEUED_SMALL_BYTES }
    }
}

/// Ranges from the head on that may be claimed: finished ones hold only
/// their queued pieces (bounded by `bound`), so this bounds
/// bookkeeping, not memory. A window of `lookahead` ranges would leave the
/// helper idle on small files: with one piece each, the ranges ahead are
/// finished at once, and it would wait for the consumer (busy in DuckDB's
/// sink) to move the head on.
const WINDOW: usize = 64;

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

/// Where a range is. A range's work belongs to no thread: whoever is free
/// takes it out of its slot for one piece and puts it back, so that the
/// ranges the consumer opened are stepped by helpers too, and a helper
/// never idles while another range has room (the consumer, busy with
/// DuckDB's sink, must not be left to finish a range alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Not opened: unclaimed, or to be opened again by the consumer at
    /// `reopen` (after a wrong guess or a cut).
    Unopened,
    /// A thread has its work out of the slot: opening it or stepping it.
    Busy,
    /// Open; its work waits in `parked` for the next thread to step it.
    Parked,
    /// Its last item is queued.
    Finished,
}

struct Slot<W: RangeWork> {
    items: VecDeque<Result<Item<W::Out>>>,
    phase: Phase,
    /// The work, while the range is `Parked`.
    parked: Option<Worker<W>>,
    /// The guessed start of the range's first record (a CSV range), set
    /// when it is opened, before any item; checked and cleared when the
    /// range becomes the head.
    guess: Option<u64>,
    /// The certain place the consumer (re)opens the range at: after a
    /// wrong guess, or to go on after a cut (`RangeFollow::Cut`).
    reopen: Option<Resume>,
    /// The thread that has the range `Busy` must drop its work (a wrong
    /// guess).
    discard: bool,
}

struct State<W: RangeWork> {
    slots: Vec<Slot<W>>,
    /// Ranges are claimed in order: every range below this one is claimed.
    next_unclaimed: usize,
    /// The range the consumer is on.
    head: usize,
    cancelled: bool,
    /// Emptied buffers, reused by whoever works next.
    spare: Vec<W::Out>,
    /// The consumer is waiting for the head range's next piece.
    consumer_waiting: bool,
    /// Bytes the queued pieces hold ([`RangeWork::piece_bytes`]).
    queued_bytes: usize,
}

type Guard<'a, W> = MutexGuard<'a, State<W>>;

struct Shared<W: RangeWork> {
    state: Mutex<State<W>>,
    changed: Condvar,
    opener: Box<Opener<W>>,
    /// Ranges open at once (claimed and not finished) at most.
    lookahead: usize,
    /// Pieces the open ranges may queue together ([`queue_bound`]).
    bound: QueueBound,
}

impl<W: RangeWork> Shared<W> {
    fn lock(&self) -> Guard<'_, W> {
        // A panicking decoder is caught before it can poison the lock; if
        // one ever did, the state is still consistent (every update is one
        // statement), so carry on with it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(&self, guard: Guard<'a, W>) -> Guard<'a, W> {
        self.changed.wait(guard).unwrap_or_else(|p| p.into_inner())
    }

    /// The end of the ranges that may be claimed now ([`WINDOW`], or
    /// `lookahead` when more threads than that may each hold a range).
    fn window_end(&self, state: &State<W>) -> usize {
        (state.head + WINDOW.max(self.lookahead)).min(state.slots.len())
    }

    /// The earliest range from `from` on that is open, idle, and may
    /// queue another piece: while the open ranges' queues have room
    /// (`bound`), and always for an empty head (the consumer waits for it).
    fn steppable(&self, state: &State<W>, from: usize) -> Option<usize> {
        let end = self.window_end(state);
        let queued: usize = (state.head..end).map(|r| state.slots[r].items.len()).sum();
        let room = self.bound.has_room(queued, state.queued_bytes);
        (from..end).find(|&r| {
            let slot = &state.slots[r];
            slot.phase == Phase::Parked && (room || (r == state.head && slot.items.is_empty()))
        })
    }

    /// Claims the next unclaimed range, if the window has one and fewer
    /// than `lookahead` ranges are open.
    fn claim(&self, state: &mut State<W>) -> Option<usize> {
        let r = state.next_unclaimed;
        let open = (state.head..r).filter(|&i| matches!(state.slots[i].phase, Phase::Busy | Phase::Parked)).count();
        (r < self.window_end(state) && open < self.lookahead).then(|| {
            state.next_unclaimed += 1;
            state.slots[r].phase = Phase::Busy;
            r
        })
    }

    /// Opens range `r` (made `Busy` by the caller) at `at`, without the
    /// lock, and parks its work, or queues the error in its place.
    fn open<'a>(&'a self, state: Guard<'a, W>, r: usize, at: Option<Resume>) -> Guard<'a, W> {
        drop(state);
        let opened = Worker::open(self, r, at);
        let mut state = self.lock();
        let slot = &mut state.slots[r];
        if std::mem::take(&mut slot.discard) {
            slot.phase = Phase::Unopened;
        } else {
            match opened {
                Ok(worker) => {
                    slot.guess = worker.work.guessed_start();
                    slot.parked = Some(worker);
                    slot.phase = Phase::Parked;
                }
                Err(e) => {
                    slot.items.push_back(Err(e));
                    slot.phase = Phase::Finished;
                }
            }
        }
        self.changed.notify_all();
        state
    }

    /// Steps parked range `r` once, without the lock, and queues the
    /// piece (or its end). Only one thread at a time has a range's work,
    /// so its pieces are queued in the order they were read.
    fn step<'a>(&'a self, mut state: Guard<'a, W>, r: usize) -> Guard<'a, W> {
        let Some(mut worker) = state.slots[r].parked.take() else { return state };
        state.slots[r].phase = Phase::Busy;
        // A helper on the head while the consumer waits leaves it part of
        // the piece (`RangeWork::step_for_idle_consumer`); the consumer
        // itself never waits while it steps.
        let consumer_idle = state.consumer_waiting && state.head == r && state.slots[r].items.is_empty();
        let spare = state.spare.pop().unwrap_or_default();
        drop(state);
        let (item, unused) = worker.step_as(spare, consumer_idle);
        let mut state = self.lock();
        if let Some(buffer) = unused {
            recycle(&mut state, buffer);
        }
        let slot = &mut state.slots[r];
        let mut done = None;
        if std::mem::take(&mut slot.discard) {
            // Its guessed start was wrong: the consumer reads it again.
            slot.phase = Phase::Unopened;
            done = Some(worker);
            if let Ok(Item::Piece(piece)) = item {
                recycle(&mut state, piece);
            }
        } else {
            let last = is_last(&item);
            if let Ok(Item::Piece(piece)) = &item {
                state.queued_bytes += W::piece_bytes(piece);
            }
            let slot = &mut state.slots[r];
            slot.items.push_back(item);
            if last {
                slot.phase = Phase::Finished;
                done = Some(worker);
            } else {
                slot.parked = Some(worker);
                slot.phase = Phase::Parked;
            }
        }
        self.changed.notify_all();
        if let Some(worker) = done {
            // Closing its file and freeing its buffers is no work for
            // under the lock.
            drop(state);
            drop(worker);
            state = self.lock();
        }
        state
    }
}

/// A range's work, one piece at a time.
struct Worker<W: RangeWork> {
    work: W,
}

impl<W: RangeWork> Worker<W> {
    /// Opens a range's work. A panic while opening (a decoder's
    /// constructor) is an error in the range's place, like a panic while
    /// stepping: a helper thread must never die holding a range, or the
    /// consumer would wait for it forever.
    fn open(shared: &Shared<W>, range: usize, at: Option<Resume>) -> Result<Worker<W>> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (shared.opener)(range, at))) {
            Ok(work) => Ok(Worker { work: work? }),
            Err(_) => Err(SanitizeError::internal("a decoder panicked while opening its input")),
        }
    }

    /// The next piece of the range in `out`, or the range's end. A panic in
    /// a decoder is an error here, never an unwinding thread.
    /// Also gives back `out` when the step made no piece of it (the range's
    /// end), so that its room is used again: a buffer made anew grows from
    /// nothing, one reallocation and copy after another (9 per piece of a
    /// CSV probe, 3% of its instructions, when every range end dropped one).
    fn step_as(&mut self, mut out: W::Out, consumer_idle: bool) -> (Result<Item<W::Out>>, Option<W::Out>) {
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if consumer_idle {
                self.work.step_for_idle_consumer(&mut out)
            } else {
                self.work.step(&mut out)
            }
        }));
        match run {
            Ok(Ok(true)) => (Ok(Item::Piece(out)), None),
            Ok(Ok(false)) => {
                let end = Item::End {
                    bytes_read: self.work.bytes_read(),
                    lines: self.work.lines_read(),
                    follow: self.work.follow(),
                };
                (Ok(end), Some(out))
            }
            // A failed or panicked step may have left the buffer half
            // written: it is dropped.
            Ok(Err(e)) => (Err(e), None),
            Err(_) => (Err(SanitizeError::internal("a decoder panicked")), None),
        }
    }
}

/// Keeps an emptied buffer for reuse, every one: a buffer is made only
/// when none is spare, so the spares never outnumber the buffers alive at
/// one moment (the queued pieces, one in each stepping thread's hands and
/// the consumer's), and keeping them all costs no peak memory. Dropping
/// some costs time where the queues fill and drain by turns (a probe whose
/// absorbing thread is faster than its decoding, which then decodes ahead
/// itself): every refill grows new buffers from nothing. With 8 kept, page
/// faults and the copies of growing vectors cost 10% of such a CSV probe's
/// time at threads = 2.
fn recycle<W: RangeWork>(state: &mut State<W>, buffer: W::Out) {
    state.spare.push(buffer);
}

fn is_last<T>(item: &Result<Item<T>>) -> bool {
    !matches!(item, Ok(Item::Piece(_)))
}

pub struct OrderedReader<W: RangeWork> {
    shared: Arc<Shared<W>>,
    helpers: Vec<JoinHandle<()>>,
    /// Where the record after the last finished range starts
    /// (`RangeFollow::At`), which the next range's guessed start must be.
    resume: Option<u64>,
}

impl<W: RangeWork> OrderedReader<W> {
    /// Reads `ranges` ranges through `opener` with `threads` threads in all
    /// (the caller's plus `threads - 1` helpers, never more helpers than
    /// ranges), the open ranges queueing pieces together up to `bound`
    /// ([`queue_bound`]; a number: that many pieces).
    pub fn new(ranges: usize, threads: usize, bound: impl Into<QueueBound>, opener: Box<Opener<W>>) -> Self {
        let bound = bound.into();
        let threads = threads.max(1);
        let helpers = (threads - 1).min(ranges);
        let slots = (0..ranges)
            .map(|_| Slot {
                items: VecDeque::new(),
                phase: Phase::Unopened,
                parked: None,
                guess: None,
                reopen: None,
                discard: false,
            })
            .collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                slots,
                next_unclaimed: 0,
                head: 0,
                cancelled: false,
                spare: Vec::new(),
                consumer_waiting: false,
                queued_bytes: 0,
            }),
            changed: Condvar::new(),
            opener,
            lookahead: threads + 1,
            bound: QueueBound { pieces: bound.pieces.max(1), ..bound },
        });
        let mut started = Vec::with_capacity(helpers);
        for _ in 0..helpers {
            let mine: Arc<Shared<W>> = Arc::clone(&shared);
            // Fewer threads than asked (a failed spawn): the consumer
            // decodes more.
            if let Ok(handle) = std::thread::Builder::new().name("sanitize-decode".into()).spawn(move || helper(&mine))
            {
                started.push(handle);
            }
        }
        OrderedReader { shared, helpers: started, resume: None }
    }

    /// A handle through which other threads step the ranges' work
    /// ([`StepOnce`]); it keeps the ranges' state alive, not the helpers.
    pub fn stepper(&self) -> Arc<dyn StepOnce> {
        Arc::clone(&self.shared) as Arc<dyn StepOnce>
    }

    /// The next step in range order, with a piece swapped into `batch`
    /// (its old contents are recycled; at a range's end `batch` is left as
    /// it is); `None` once every range is done.
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
                    restart(&shared, &mut state, head, Resume { offset, line: 1, bytes: 0 });
                    continue;
                }
            }
            if let Some(item) = state.slots[head].items.pop_front() {
                if let Ok(Item::Piece(piece)) = &item {
                    state.queued_bytes = state.queued_bytes.saturating_sub(W::piece_bytes(piece));
                }
                if let Ok(Item::End { follow: RangeFollow::Cut(at), .. }) = &item {
                    // The range's guess held: the consumer reads on from
                    // the record it was cut at.
                    let slot = &mut state.slots[head];
                    slot.reopen = Some(*at);
                    slot.phase = Phase::Unopened;
                    continue;
                }
                if is_last(&item) {
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
                if matches!(item, Ok(Item::Piece(_))) {
                    // The piece takes the place of the consumer's buffer,
                    // which goes back to be filled again. At a range's end
                    // the consumer keeps its buffer: recycled, the empty
                    // one left in its place would have the next piece grow
                    // from nothing.
                    recycle(&mut state, std::mem::take(batch));
                }
                drop(state);
                return self.deliver(head, item, batch);
            }
            match state.slots[head].phase {
                Phase::Unopened => {
                    // Opened by the consumer once the range before it is
                    // done: where its records ended is certain.
                    let at = state.slots[head].reopen.take().or(self.resume.map(|offset| Resume {
                        offset,
                        line: 1,
                        bytes: 0,
                    }));
                    state.slots[head].phase = Phase::Busy;
                    state.next_unclaimed = state.next_unclaimed.max(head + 1);
                    state = shared.open(state, head, at);
                }
                Phase::Parked => state = shared.step(state, head),
                Phase::Busy => {
                    // Another thread has the head: work on a range ahead
                    // instead of waiting, while one has room.
                    if let Some(r) = shared.steppable(&state, head + 1) {
                        state = shared.step(state, r);
                    } else if let Some(r) = shared.claim(&mut state) {
                        state = shared.open(state, r, None);
                    } else {
                        state.consumer_waiting = true;
                        state = shared.wait(state);
                        state.consumer_waiting = false;
                    }
                }
                Phase::Finished => {
                    return Err(SanitizeError::internal("a finished range has nothing queued"));
                }
            }
        }
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

/// Drops what was read of range `range` from a wrong guess and has the
/// consumer read it again from `at`. A thread still on it drops its work
/// when it is done with its piece.
fn restart<W: RangeWork>(shared: &Shared<W>, state: &mut State<W>, range: usize, at: Resume) {
    let slot = &mut state.slots[range];
    slot.guess = None;
    slot.reopen = Some(at);
    let pieces: Vec<W::Out> = slot
        .items
        .drain(..)
        .filter_map(|item| match item {
            Ok(Item::Piece(piece)) => Some(piece),
            _ => None,
        })
        .collect();
    if slot.phase == Phase::Busy {
        slot.discard = true;
    } else {
        slot.parked = None;
        slot.phase = Phase::Unopened;
    }
    for piece in pieces {
        state.queued_bytes = state.queued_bytes.saturating_sub(W::piece_bytes(&piece));
        recycle(state, piece);
    }
    shared.changed.notify_all();
}

/// One step of the ranges' work, for a thread that is neither the
/// consumer nor a helper: one of DuckDB's threads that found another of
/// them taking the next chunk (a scan with insertion order off, which
/// DuckDB calls from all its threads), and would otherwise sleep while the
/// consumer holds the scan, maybe waiting itself for the head range.
pub trait StepOnce: Send + Sync {
    /// Steps or opens one range, as a helper would, without waiting;
    /// false when there is nothing to do now.
    fn step_once(&self) -> bool;
}

impl<W: RangeWork> StepOnce for Shared<W> {
    fn step_once(&self) -> bool {
        let _quiet = crate::quiet::enter();
        let mut state = self.lock();
        if state.cancelled || state.head >= state.slots.len() {
            return false;
        }
        if let Some(r) = self.steppable(&state, state.head) {
            drop(self.step(state, r));
            true
        } else if let Some(r) = self.claim(&mut state) {
            drop(self.open(state, r, None));
            true
        } else {
            false
        }
    }
}

/// A helper: steps the earliest open range with room for a piece, or
/// opens the next range of the window, or waits; until every range is
/// done or the reader is dropped.
fn helper<W: RangeWork>(shared: &Shared<W>) {
    let _quiet = crate::quiet::enter();
    let mut state = shared.lock();
    loop {
        if state.cancelled || state.head >= state.slots.len() {
            return;
        }
        if let Some(r) = shared.steppable(&state, state.head) {
            state = shared.step(state, r);
        } else if let Some(r) = shared.claim(&mut state) {
            state = shared.open(state, r, None);
        } else {
            state = shared.wait(state);
        }
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

    /// A [`Numbers`] that notes the room of every buffer it is given.
    struct NotingRoom {
        numbers: Numbers,
        rooms: Arc<Mutex<Vec<usize>>>,
    }

    impl RecordReader for NotingRoom {
        fn next_batch(&mut self, batch: &mut Batch, max: usize) -> Result<usize> {
            self.rooms.lock().unwrap().push(batch.meta.capacity());
            self.numbers.next_batch(batch, max)
        }
        fn bytes_read(&self) -> u64 {
            self.numbers.bytes_read()
        }
        fn lines_read(&self) -> u64 {
            self.numbers.lines_read()
        }
    }

    /// An opener of ranges of `records` records each, `per_batch` to a
    /// piece, whose readers note the room of every buffer they are given.
    #[allow(clippy::type_complexity)]
    fn noting_rooms(records: u64, per_batch: u64) -> (Arc<Mutex<Vec<usize>>>, Box<Opener<Decode>>) {
        let rooms = Arc::new(Mutex::new(Vec::new()));
        let noted = Arc::clone(&rooms);
        let opener: Box<Opener<Decode>> = Box::new(move |i, _| {
            let first = 100 * i as u64;
            let numbers = Numbers { next: first, end: first + records, per_batch, fail_at: None };
            Ok(Decode::new(Box::new(NotingRoom { numbers, rooms: Arc::clone(&noted) }), None))
        });
        (rooms, opener)
    }

    /// Buffers go round: past the first pieces, a decoder is never handed
    /// a buffer without room, neither after a range's end (whose buffer
    /// goes back to be reused, not dropped) nor after the consumer's step
    /// over one (the consumer keeps its buffer, and no empty one is
    /// recycled in its place).
    /// One thread only: with a helper, how many pieces it decodes ahead of
    /// the consumer depends on scheduling, and each piece ahead holds a
    /// buffer of its own (up to 13 of 48 at threads = 2 on a busy
    /// machine). At one thread the test fails with either of those undone.
    #[test]
    fn every_buffer_after_the_first_ones_comes_back_with_its_room() {
        let threads = 1;
        let (rooms, opener) = noting_rooms(9, 4);
        let mut reader = OrderedReader::new(12, threads, QUEUED_PIECES, opener);
        let mut batch = Batch::default();
        let mut pieces = 0;
        while let Some(step) = reader.next(&mut batch).unwrap() {
            pieces += usize::from(matches!(step, Step::Piece { .. }));
        }
        assert_eq!(pieces, 12 * 3);
        let rooms = rooms.lock().unwrap();
        // A buffer for the one thread, and one more that the consumer holds.
        let fresh = rooms.iter().filter(|&&room| room == 0).count();
        assert!(fresh <= threads + 1, "{fresh} of {} steps had a new buffer", rooms.len());
    }

    /// Buffers made never outnumber those alive at one moment: a consumer
    /// that stops now and then, so that the helpers fill the queues to
    /// their bound, then drains them, gets every emptied buffer back to the
    /// helpers, and no refill makes new ones. With fewer spares kept than
    /// the queues hold, each refill makes as many again as were dropped.
    #[test]
    fn queues_that_fill_and_drain_make_no_new_buffers() {
        let threads = 3;
        let (rooms, opener) = noting_rooms(6, 2);
        let mut reader = OrderedReader::new(200, threads, QUEUED_PIECES, opener);
        let mut batch = Batch::default();
        let mut pieces = 0;
        while let Some(step) = reader.next(&mut batch).unwrap() {
            if matches!(step, Step::Piece { .. }) {
                pieces += 1;
                if pieces % 100 == 0 {
                    // The helpers fill the queues meanwhile.
                    std::thread::sleep(std::time::Duration::from_millis(30));
                }
            }
        }
        assert_eq!(pieces, 200 * 3);
        let rooms = rooms.lock().unwrap();
        let fresh = rooms.iter().filter(|&&room| room == 0).count();
        // About as many as the queues and threads hold at once, whatever
        // the number of refills (the head range may queue past the bound,
        // so twice that is the limit here); with spares dropped, each of
        // the eight refills makes new ones again, hundreds in this run.
        let alive = 2 * (QUEUED_PIECES + threads);
        assert!(fresh <= alive, "{fresh} of {} steps had a new buffer, at most {alive} alive", rooms.len());
    }

    /// Range i holds records 100*i .. 100*i + sizes[i].
    fn read_all(sizes: &[u64], threads: usize, fail_at: Option<u64>) -> (Vec<u64>, Vec<Step>, Option<String>) {
        let sizes_owned = sizes.to_vec();
        let opener: Box<Opener<Decode>> = Box::new(move |i, _| {
            let first = 100 * i as u64;
            Ok(Decode::new(Box::new(Numbers { next: first, end: first + sizes_owned[i], per_batch: 3, fail_at }), None))
        });
        let mut reader = OrderedReader::new(sizes.len(), threads, QUEUED_PIECES, opener);
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
                let mut reader = OrderedReader::new(sizes.len(), threads, QUEUED_PIECES, opener);
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

    /// Ranges of one piece each (small files) finish as soon as they are
    /// stepped and hold nothing open: while the consumer is away (in
    /// DuckDB's sink), the helper goes on through the window, not only
    /// `lookahead` ranges past the head.
    #[test]
    fn the_helper_runs_ahead_through_finished_small_ranges_while_the_consumer_is_away() {
        let opened = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = Arc::clone(&opened);
        let opener: Box<Opener<Decode>> = Box::new(move |i, _| {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let first = 100 * i as u64;
            Ok(Decode::new(Box::new(Numbers { next: first, end: first + 2, per_batch: 2, fail_at: None }), None))
        });
        let ranges = 40;
        let mut reader = OrderedReader::new(ranges, 2, QUEUED_PIECES, opener);
        let mut batch = Batch::default();
        assert_eq!(reader.next(&mut batch).unwrap(), Some(Step::Piece { range: 0 }));
        // The consumer takes nothing more; the helper alone opens ranges.
        // A bounded wait for it (no timing is asserted: the bound only
        // ends the test if the helper stopped).
        let ahead = (0..10_000).find_map(|_| {
            let n = opened.load(std::sync::atomic::Ordering::SeqCst);
            if n >= 20 {
                return Some(n);
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
            None
        });
        assert!(
            ahead.is_some(),
            "the helper stopped at {} ranges opened",
            opened.load(std::sync::atomic::Ordering::SeqCst)
        );
        let mut seen = batch.meta.iter().map(|m| m.line).collect::<Vec<_>>();
        while let Some(step) = reader.next(&mut batch).unwrap() {
            if matches!(step, Step::Piece { .. }) {
                seen.extend(batch.meta.iter().map(|m| m.line));
            }
        }
        let expected: Vec<u64> = (0..ranges as u64).flat_map(|i| [100 * i, 100 * i + 1]).collect();
        assert_eq!(seen, expected);
    }

    /// A thread that is neither consumer nor helper (a DuckDB thread
    /// waiting to take a chunk) steps the ranges through the stepper: at
    /// one thread there is no helper, so every piece the consumer then
    /// takes without stepping was decoded by that thread, and the records
    /// still come in range order.
    #[test]
    fn another_thread_steps_the_ranges_through_the_stepper() {
        let sizes = [5u64, 0, 7, 3];
        let opener: Box<Opener<Decode>> = Box::new(move |i, _| {
            let first = 100 * i as u64;
            Ok(Decode::new(Box::new(Numbers { next: first, end: first + sizes[i], per_batch: 2, fail_at: None }), None))
        });
        let mut reader = OrderedReader::new(sizes.len(), 1, QUEUED_PIECES, opener);
        let stepper = reader.stepper();
        let steps = std::thread::spawn(move || std::iter::from_fn(|| stepper.step_once().then_some(())).count())
            .join()
            .unwrap();
        // Pieces of 2 records and an end per range: 3 + 1, 0 + 1, 4 + 1
        // and 2 + 1 items, each one step, after 4 opens.
        let items = 4 + 1 + 5 + 3;
        assert_eq!(steps, 4 + items);
        let queued: usize = {
            let state = reader.shared.lock();
            state.slots.iter().map(|s| s.items.len()).sum()
        };
        assert_eq!(queued, items, "every piece and end waits for the consumer");
        let mut batch = Batch::default();
        let mut seen = Vec::new();
        while let Some(step) = reader.next(&mut batch).unwrap() {
            if matches!(step, Step::Piece { .. }) {
                seen.extend(batch.meta.iter().map(|m| m.line));
            }
        }
        let expected: Vec<u64> =
            sizes.iter().enumerate().flat_map(|(i, &n)| (0..n).map(move |k| 100 * i as u64 + k)).collect();
        assert_eq!(seen, expected);
        assert!(!reader.stepper().step_once(), "nothing is left to step");
    }

    /// On more cores than the window has ranges, every thread still gets
    /// a range of its own: ranges are opened at once up to `lookahead`.
    #[test]
    fn more_threads_than_the_window_each_open_a_range_at_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let threads = WINDOW + 16;
        let (opening, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (now, seen) = (Arc::clone(&opening), Arc::clone(&most));
        let opener: Box<Opener<Decode>> = Box::new(move |i, _| {
            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
            seen.fetch_max(n, Ordering::SeqCst);
            // Each opening waits, boundedly, for the others to start, so
            // that how many are opening at once is what the reader allows.
            for _ in 0..2_000 {
                if seen.load(Ordering::SeqCst) >= threads {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            now.fetch_sub(1, Ordering::SeqCst);
            let first = 100 * i as u64;
            Ok(Decode::new(Box::new(Numbers { next: first, end: first + 1, per_batch: 1, fail_at: None }), None))
        });
        let ranges = threads * 2;
        let mut reader = OrderedReader::new(ranges, threads, QUEUED_PIECES, opener);
        let mut batch = Batch::default();
        let mut pieces = 0;
        while let Some(step) = reader.next(&mut batch).unwrap() {
            pieces += usize::from(matches!(step, Step::Piece { .. }));
        }
        assert_eq!(pieces, ranges);
        assert!(most.load(Ordering::SeqCst) > WINDOW, "at most {} ranges opening at once", most.load(Ordering::SeqCst));
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
            let mut reader = OrderedReader::new(5, threads, QUEUED_PIECES, opener);
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

    /// A reader of `left` one-record batches that counts those read on
    /// the consumer's thread.
    struct Tracked {
        left: u64,
        consumer: std::thread::ThreadId,
        on_consumer: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl RecordReader for Tracked {
        fn next_batch(&mut self, batch: &mut Batch, _max: usize) -> Result<usize> {
            if self.left == 0 {
                return Ok(0);
            }
            self.left -= 1;
            if std::thread::current().id() == self.consumer {
                self.on_consumer.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            batch.tape.roots.push(batch.tape.nodes.len() as u32);
            batch.tape.nodes.push(Node::Null);
            batch.meta.push(RecordMeta { line: 0, byte: 0, error: None });
            Ok(1)
        }
        fn bytes_read(&self) -> u64 {
            0
        }
    }

    #[test]
    fn a_slow_consumer_leaves_the_decoding_to_the_helper_even_of_ranges_it_opened() {
        // The consumer spends its time on each piece (as on DuckDB's sink
        // behind it) and the helper decodes fast. Once the consumer has
        // opened or started a range, the helper steps it too: the consumer
        // decodes only what it must to start. (When a range stayed with
        // the thread that opened it, the consumer decoded a whole range
        // of the four it took on while it waited at the start.)
        let consumer = std::thread::current().id();
        let on_consumer = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&on_consumer);
        let opener: Box<Opener<Decode>> = Box::new(move |_, _| {
            let reader = Tracked { left: 30, consumer, on_consumer: Arc::clone(&counter) };
            Ok(Decode::new(Box::new(reader), None))
        });
        let mut reader = OrderedReader::new(4, 2, QUEUED_PIECES, opener);
        let mut batch = Batch::default();
        let mut pieces = 0;
        while let Some(step) = reader.next(&mut batch).unwrap() {
            if let Step::Piece { .. } = step {
                pieces += 1;
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        assert_eq!(pieces, 120);
        let decoded_here = on_consumer.load(std::sync::atomic::Ordering::Relaxed);
        assert!(decoded_here <= 24, "the consumer decoded {decoded_here} of 120 pieces");
    }

    #[test]
    fn the_open_ranges_never_queue_more_than_the_bound_lets_them() {
        // Helpers far faster than the consumer fill the queues to the
        // bound; each thread may add one piece past it, never more.
        for (threads, bound) in [(2, 3), (3, 6), (4, QUEUED_PIECES)] {
            let opener: Box<Opener<Decode>> = Box::new(|i, _| {
                let first = 1000 * i as u64;
                Ok(Decode::new(Box::new(Numbers { next: first, end: first + 40, per_batch: 1, fail_at: None }), None))
            });
            let mut reader = OrderedReader::new(6, threads, bound, opener);
            let (pieces, most) = drain_slowly(&mut reader, |_| {});
            assert_eq!(pieces, 240);
            assert!(most <= bound - 1 + threads, "threads {threads}: {most} queued, bound {bound}");
            assert!(most >= bound.min(40), "threads {threads}: the decoding threads never filled the queues ({most})");
        }
    }

    /// Takes every piece, sleeping a millisecond after each so that the
    /// decoding threads run ahead and fill the queues, and passes the
    /// reader's state to `look` after each piece; returns how many pieces
    /// there were and the most queued at once.
    fn drain_slowly(reader: &mut OrderedReader<Decode>, mut look: impl FnMut(&State<Decode>)) -> (usize, usize) {
        let mut batch = Batch::default();
        let (mut pieces, mut most) = (0, 0);
        while let Some(step) = reader.next(&mut batch).unwrap() {
            if let Step::Piece { .. } = step {
                pieces += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
                let state = reader.shared.lock();
                most = most.max(state.slots.iter().map(|s| s.items.len()).sum::<usize>());
                look(&state);
            }
        }
        (pieces, most)
    }

    /// A [`Numbers`] whose every batch holds at least `pad` bytes of room.
    struct Padded {
        numbers: Numbers,
        pad: usize,
    }

    impl RecordReader for Padded {
        fn next_batch(&mut self, batch: &mut Batch, max: usize) -> Result<usize> {
            batch.tape.text.reserve(self.pad);
            self.numbers.next_batch(batch, max)
        }
        fn bytes_read(&self) -> u64 {
            self.numbers.bytes_read()
        }
        fn lines_read(&self) -> u64 {
            self.numbers.lines_read()
        }
    }

    #[test]
    fn small_pieces_queue_past_the_bound_and_large_ones_do_not() {
        // Past `pieces`, pieces queue up to `small_pieces` only while the
        // queued ones hold less than `small_bytes`: 1 MiB pieces stop at
        // the bound, small ones go on to the room for small pieces.
        let bound = QueueBound { pieces: 3, small_pieces: 12, small_bytes: 1 << 20 };
        let threads = 2;
        for (pad, least, most_allowed) in [(0, 12, 12 - 1 + threads), (1 << 20, 3, 3 - 1 + threads)] {
            let opener: Box<Opener<Decode>> = Box::new(move |i, _| {
                let first = 1000 * i as u64;
                let numbers = Numbers { next: first, end: first + 40, per_batch: 1, fail_at: None };
                Ok(Decode::new(Box::new(Padded { numbers, pad }), None))
            });
            let mut reader = OrderedReader::new(6, threads, bound, opener);
            let (pieces, most) = drain_slowly(&mut reader, |state| {
                let held: usize = state
                    .slots
                    .iter()
                    .flat_map(|s| &s.items)
                    .map(|item| match item {
                        Ok(Item::Piece(b)) => Decode::piece_bytes(b),
                        _ => 0,
                    })
                    .sum();
                assert_eq!(state.queued_bytes, held, "the running count is what the queues hold");
            });
            assert_eq!(pieces, 240);
            assert!(most <= most_allowed, "pad {pad}: {most} queued");
            assert!(most >= least, "pad {pad}: the helper never filled the queues ({most})");
        }
    }

    #[test]
    fn a_batch_memory_budget_shrinks_the_queues() {
        // Under a budget each piece may be as large as the budget, so the
        // queues hold fewer of them than without one.
        let (free, budgeted) = (queue_bound(None), queue_bound(Some(64 << 20)));
        assert_eq!(free.pieces, QUEUED_PIECES);
        assert_eq!(budgeted, QueueBound::from(QUEUED_PIECES_UNDER_A_BUDGET));
        assert!(budgeted.pieces < free.pieces);
        // No room for small pieces under a budget.
        assert!(!budgeted.has_room(QUEUED_PIECES_UNDER_A_BUDGET, 0));
        assert!(free.has_room(QUEUED_PIECES, 0) && !free.has_room(QUEUED_PIECES, QUEUED_SMALL_BYTES));
    }

    #[test]
    fn dropping_the_reader_early_stops_every_helper() {
        let (_, _, _) = read_all(&[1000; 8], 4, None);
        let opener: Box<Opener<Decode>> = Box::new(|i, _| {
            let numbers = Numbers { next: 0, end: 1_000_000 * (i as u64 + 1), per_batch: 50, fail_at: None };
            Ok(Decode::new(Box::new(numbers), None))
        });
        let mut reader = OrderedReader::new(8, 4, QUEUED_PIECES, opener);
        let mut batch = Batch::default();
        assert!(matches!(reader.next(&mut batch), Ok(Some(Step::Piece { .. }))));
        drop(reader); // joins the helpers: returns only when they are gone
    }
}
