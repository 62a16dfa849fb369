//! Decoding in a background thread: while the caller absorbs or
//! materializes one batch, the next is being read and parsed. Both passes
//! (probe and scan) use it, so the decoder and the engine run on two cores.
//! The thread is a core DuckDB did not grant: with `SET threads = 1` the
//! scan decodes inline instead (`Options::background_decode`), one core.
//! Memory: at most three batches exist at once (being decoded, queued, being
//! consumed), each bounded by the batch budget.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::budget::BatchBudget;
use crate::error::{Result, SanitizeError};
use crate::formats::{Batch, RecordReader};

pub type SendReader = Box<dyn RecordReader + Send>;

/// A decoded batch and the reader's byte count after it.
struct Decoded {
    batch: Batch,
    bytes_read: u64,
}

pub struct Prefetch {
    /// The reader until the first batch is asked for (the Parquet schema
    /// sample is taken from it before decoding starts).
    idle: Option<(SendReader, Option<u64>)>,
    batches: Option<Receiver<Result<Decoded>>>,
    /// Emptied batches go back to the decoder to be reused.
    recycle: Option<SyncSender<Batch>>,
    thread: Option<JoinHandle<()>>,
    /// Decoding on the caller's thread (no background thread).
    inline: Option<(SendReader, BatchBudget)>,
    bytes_read: u64,
    done: bool,
}

impl Prefetch {
    /// `background`: decode in a thread of our own; else on the caller's.
    pub fn new(reader: SendReader, memory_limit: Option<u64>, background: bool) -> Self {
        let (idle, inline) = if background {
            (Some((reader, memory_limit)), None)
        } else {
            (None, Some((reader, BatchBudget::new(memory_limit))))
        };
        Prefetch { idle, batches: None, recycle: None, thread: None, inline, bytes_read: 0, done: false }
    }

    fn start(&mut self) {
        let Some((mut reader, memory_limit)) = self.idle.take() else { return };
        let (send, recv) = sync_channel::<Result<Decoded>>(1);
        let (give_back, take_back) = sync_channel::<Batch>(2);
        let spawned = std::thread::Builder::new().name("sanitize-decode".into()).spawn(move || {
            let _quiet = crate::quiet::enter();
            let mut budget = BatchBudget::new(memory_limit);
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| loop {
                let mut batch = take_back.try_recv().unwrap_or_default();
                batch.clear();
                let result = reader.next_batch(&mut batch, budget.records());
                budget.observe(&mut batch);
                let finished = !matches!(result, Ok(n) if n > 0);
                let message = result.map(|_| Decoded { batch, bytes_read: reader.bytes_read() });
                if send.send(message).is_err() || finished {
                    return; // the consumer is gone, or the input is exhausted
                }
            }));
            if run.is_err() {
                let _ = send.send(Err(SanitizeError::internal("the decoder thread panicked")));
            }
        });
        match spawned {
            Ok(handle) => {
                self.thread = Some(handle);
                self.batches = Some(recv);
                self.recycle = Some(give_back);
            }
            Err(e) => {
                // No thread to be had: report it as an I/O-class failure.
                let (send, recv) = sync_channel(1);
                let _ = send.send(Err(SanitizeError::io(format!("cannot start the decoder thread: {e}"))));
                self.batches = Some(recv);
            }
        }
    }

    /// Swaps the next decoded batch into `batch`; 0 at end of input.
    pub fn next_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        if self.done {
            return Ok(0);
        }
        if let Some((reader, budget)) = self.inline.as_mut() {
            batch.clear();
            let n = reader.next_batch(batch, budget.records())?;
            budget.observe(batch);
            self.bytes_read = reader.bytes_read();
            self.done = n == 0;
            return Ok(n);
        }
        self.start();
        let Some(batches) = self.batches.as_ref() else { return Ok(0) };
        let decoded = match batches.recv() {
            Ok(r) => r?,
            Err(_) => return Err(SanitizeError::internal("the decoder thread stopped without a result")),
        };
        self.bytes_read = decoded.bytes_read;
        let mut old = std::mem::replace(batch, decoded.batch);
        if let Some(recycle) = &self.recycle {
            old.clear();
            let _ = recycle.try_send(old);
        }
        let n = batch.len();
        if n == 0 {
            self.done = true;
        }
        Ok(n)
    }

    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// A typed source's declaration (Parquet), taken before decoding starts.
    pub fn declaration(&mut self) -> Option<crate::formats::Declaration> {
        match (self.idle.as_mut(), self.inline.as_mut()) {
            (Some((reader, _)), _) | (_, Some((reader, _))) => reader.declaration(),
            _ => None,
        }
    }
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        // Closing the channels stops the decoder at its next send; wait for
        // it so that no thread of ours outlives the scan.
        self.batches = None;
        self.recycle = None;
        if let Some(handle) = self.thread.take() {
            let _ = handle.join();
        }
    }
}
