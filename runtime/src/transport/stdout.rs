//! The one writer of stdout in stdio mode (docs/runtime.md, "Listing tools").
//!
//! Every message reaches stdout through one task, a whole message at a time, so lines never
//! interleave. When stdout is a pipe (as clients start servers), the task writes to it itself:
//! the parts of a message that live as long as the process and never change (the compiled-in
//! `tools/list` pages) are spliced into the pipe with `vmsplice(2)`, so the kernel hands the
//! client those pages instead of copying 254 KiB (natscli's answer) into the pipe on every
//! request; everything else is written. Anywhere else (a file, a terminal) it writes through
//! Tokio's stdout.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::body::Bytes;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;

/// Messages waiting for stdout at most (rmcp's and the fast answers together).
const QUEUE: usize = 64;

/// What the stdout pipe is grown to hold, at most (Linux's default is 64 KiB; an unprivileged
/// process may not go above `/proc/sys/fs/pipe-max-size`, 1 MiB unless changed): a
/// large application's whole `tools/list` answer then goes out at once instead of in several
/// rounds, each waiting for the client to read.
const PIPE_BYTES: usize = 1 << 20;

/// Parts shorter than this are written even when they could be spliced: a spliced part takes
/// a slot of the pipe's ring for each page it touches, a written one merges with its neighbours.
const SPLICE_FROM: usize = 16 << 10;

/// A part of a message.
#[derive(Debug, Clone)]
pub(crate) enum Chunk {
    /// Made for this message (rmcp's messages, the head of an answer with the request's id).
    Owned(Bytes),
    /// Lives as long as the process and never changes: safe to hand to the pipe by reference.
    Fixed(&'static [u8]),
}

impl Chunk {
    fn bytes(&self) -> &[u8] {
        match self {
            Chunk::Owned(bytes) => bytes,
            Chunk::Fixed(bytes) => bytes,
        }
    }
}

/// One whole message for stdout, as parts in order.
pub(crate) type Frame = Vec<Chunk>;

/// Grows the stdout pipe and starts the writer task; returns the queue that feeds it.
pub(crate) fn writer() -> (mpsc::Sender<Frame>, tokio::task::JoinHandle<()>) {
    grow_pipe();
    let (sender, receiver) = mpsc::channel(QUEUE);
    let task = match pipe::open() {
        Some(pipe) => {
            tracing::debug!("stdout is a pipe: compiled-in answers are spliced into it");
            tokio::spawn(pipe::write_frames(pipe, receiver))
        }
        None => tokio::spawn(write_frames(tokio::io::stdout(), receiver)),
    };
    (sender, task)
}

/// The writer for a stdout that is not a pipe.
async fn write_frames<W: AsyncWrite + Unpin>(mut stdout: W, mut frames: mpsc::Receiver<Frame>) {
    while let Some(frame) = frames.recv().await {
        for chunk in &frame {
            if let Err(error) = stdout.write_all(chunk.bytes()).await {
                tracing::debug!(%error, "writing to stdout failed");
                return;
            }
        }
        if frames.is_empty()
            && let Err(error) = stdout.flush().await
        {
            tracing::debug!(%error, "flushing stdout failed");
            return;
        }
    }
    let _ = stdout.flush().await;
}

#[cfg(target_os = "linux")]
mod pipe {
    use std::io::{self, IoSlice};
    use std::os::fd::AsRawFd;

    use nix::fcntl::{SpliceFFlags, vmsplice};
    use nix::sys::uio::writev;
    use tokio::net::unix::pipe::{OpenOptions, Sender};
    use tokio::sync::mpsc;

    use super::{Chunk, Frame, SPLICE_FROM};

    /// Stdout as a non-blocking pipe of its own: reopened through `/proc/self/fd/1`, so
    /// `O_NONBLOCK` stays on this open file description. `None` when stdout is not a pipe or
    /// cannot be reopened.
    pub(super) fn open() -> Option<Sender> {
        let path = format!("/proc/self/fd/{}", io::stdout().as_raw_fd());
        OpenOptions::new().open_sender(path).ok()
    }

    /// The writer for a pipe: each large fixed part spliced together with the fixed parts right
    /// after it (one `vmsplice` for the page and its closing bytes), every run of other parts
    /// written with one `writev`, each once the pipe has room. A system that refuses
    /// `vmsplice` (a sandbox's filter) gets every part written from then on.
    pub(super) async fn write_frames(pipe: Sender, mut frames: mpsc::Receiver<Frame>) {
        let mut splice = true;
        let mut spliced = false;
        while let Some(frame) = frames.recv().await {
            let mut written: Vec<&[u8]> = Vec::new();
            let mut chunks = frame.iter().peekable();
            while let Some(chunk) = chunks.next() {
                match chunk {
                    Chunk::Fixed(bytes) if splice && bytes.len() >= SPLICE_FROM => {
                        // What comes before it goes first.
                        if write(&pipe, &mut written).await.is_err() {
                            return;
                        }
                        let mut run = vec![*bytes];
                        while let Some(Chunk::Fixed(next)) = chunks.peek() {
                            run.push(next);
                            chunks.next();
                        }
                        match self::splice(&pipe, &run).await {
                            Ok(()) if !spliced => {
                                spliced = true;
                                tracing::debug!(bytes = bytes.len(), "first answer spliced");
                            }
                            Ok(()) => {}
                            Err(Refused { at: 0, error }) => {
                                tracing::debug!(%error, "vmsplice refused; writing instead");
                                splice = false;
                                written.extend(run);
                            }
                            Err(Refused { error, .. }) => {
                                tracing::debug!(%error, "writing to stdout failed");
                                return;
                            }
                        }
                    }
                    chunk => written.push(chunk.bytes()),
                }
            }
            if write(&pipe, &mut written).await.is_err() {
                return;
            }
        }
    }

    #[derive(Clone, Copy)]
    enum Mode {
        Splice,
        Write,
    }

    /// Why a part did not get through, and how much of it had.
    struct Refused {
        at: usize,
        error: io::Error,
    }

    /// Hands `parts` to the pipe by reference, in one call when the pipe has room. The client
    /// reads these very pages later, so they must stay as they are for as long as the process
    /// lives: hence `'static`.
    async fn splice(pipe: &Sender, parts: &[&'static [u8]]) -> Result<(), Refused> {
        let mut slices: Vec<IoSlice<'static>> = parts
            .iter()
            .filter(|part| !part.is_empty())
            .map(|part| IoSlice::new(part))
            .collect();
        put(pipe, &mut slices, Mode::Splice).await
    }

    /// Copies `parts` into the pipe in one `writev` when there is room for them, and empties
    /// the list; a failure is logged.
    async fn write(pipe: &Sender, parts: &mut Vec<&[u8]>) -> Result<(), ()> {
        let mut slices: Vec<IoSlice<'_>> = parts
            .drain(..)
            .filter(|part| !part.is_empty())
            .map(IoSlice::new)
            .collect();
        put(pipe, &mut slices, Mode::Write)
            .await
            .map_err(|Refused { error, .. }| {
                tracing::debug!(%error, "writing to stdout failed");
            })
    }

    /// Puts all of `parts` into the pipe, waiting for room as often as it takes.
    async fn put(pipe: &Sender, mut parts: &mut [IoSlice<'_>], mode: Mode) -> Result<(), Refused> {
        let mut at = 0;
        while !parts.is_empty() {
            pipe.writable()
                .await
                .map_err(|error| Refused { at, error })?;
            let outcome = pipe.try_io(|| {
                let sent = match mode {
                    Mode::Splice => vmsplice(pipe, parts, SpliceFFlags::SPLICE_F_NONBLOCK),
                    Mode::Write => writev(pipe, parts),
                };
                sent.map_err(io::Error::from)
            });
            match outcome {
                Ok(0) => {
                    let error = io::Error::new(io::ErrorKind::WriteZero, "stdout took nothing");
                    return Err(Refused { at, error });
                }
                Ok(sent) => {
                    at += sent;
                    IoSlice::advance_slices(&mut parts, sent);
                }
                // Not writable after all (tokio then waits for the next readiness), or a signal.
                Err(error)
                    if matches!(
                        error.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) => {}
                Err(error) => return Err(Refused { at, error }),
            }
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod pipe {
    use tokio::sync::mpsc;

    use super::Frame;

    pub(super) enum Never {}

    pub(super) fn open() -> Option<Never> {
        None
    }

    pub(super) async fn write_frames(pipe: Never, _: mpsc::Receiver<Frame>) {
        match pipe {}
    }
}

/// Grows the stdout pipe to [`PIPE_BYTES`] when stdout is a pipe. Pages are taken only
/// while the client has not read them yet. Failing is harmless: stdout may be a file or a
/// terminal, or the system may cap pipes lower; writes then take a few more rounds.
#[cfg(target_os = "linux")]
fn grow_pipe() {
    use nix::fcntl::{FcntlArg, fcntl};
    // An unprivileged process may not go above the system's cap.
    let cap = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .unwrap_or(PIPE_BYTES);
    let size = i32::try_from(PIPE_BYTES.min(cap)).unwrap_or(i32::MAX);
    match fcntl(std::io::stdout(), FcntlArg::F_SETPIPE_SZ(size)) {
        Ok(size) => tracing::debug!(size, "stdout pipe grown"),
        Err(errno) => tracing::debug!(%errno, "stdout pipe left as it is"),
    }
}

#[cfg(not(target_os = "linux"))]
fn grow_pipe() {}

/// The `AsyncWrite` rmcp's line transport writes to: it collects what one message writes and
/// queues it as one frame when rmcp flushes (it flushes after every message).
pub(crate) struct FrameWriter {
    buffer: Vec<u8>,
    queue: PollSender<Frame>,
}

impl FrameWriter {
    /// A writer feeding `queue`.
    pub(crate) fn new(queue: mpsc::Sender<Frame>) -> Self {
        Self {
            buffer: Vec::new(),
            queue: PollSender::new(queue),
        }
    }
}

impl AsyncWrite for FrameWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.buffer.extend_from_slice(data);
        Poll::Ready(Ok(data.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.buffer.is_empty() {
            return Poll::Ready(Ok(()));
        }
        let closed = || io::Error::new(io::ErrorKind::BrokenPipe, "stdout writer stopped");
        ready!(self.queue.poll_reserve(cx)).map_err(|_| closed())?;
        let frame = vec![Chunk::Owned(Bytes::from(std::mem::take(&mut self.buffer)))];
        self.queue.send_item(frame).map_err(|_| closed())?;
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.as_mut().poll_flush(cx))?;
        self.queue.close();
        Poll::Ready(Ok(()))
    }
}
