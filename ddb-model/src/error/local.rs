//! [`LocalProblem`]: why the embedded engine (feature `local`) could not start (in
//! [`Error::Local`](super::Error::Local)).

/// The step at which the embedded engine failed to start; `reason` is the operating
/// system's or the engine's own message. Carried by [`Error::Local`](super::Error::Local).
/// The outcome is kept for the process: every later call gets the same problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LocalProblem {
    /// No loopback port could be bound (or configured, or read back).
    #[error("no loopback port: {reason}")]
    Port {
        /// The system's or the engine's message.
        reason: String,
    },
    /// The engine's in-memory database could not be opened.
    #[error("the engine did not open: {reason}")]
    Engine {
        /// The system's or the engine's message.
        reason: String,
    },
    /// The server's thread or its runtime could not be started.
    #[error("the server did not start: {reason}")]
    Thread {
        /// The system's or the engine's message.
        reason: String,
    },
    /// The server's thread stopped before it served.
    #[error("the server stopped before it was ready")]
    Stopped,
}
