//! [`LocalProblem`]: why the embedded engine (feature `local`) could not start (in
//! [`Error::Local`](super::Error::Local)).

use std::fmt;

/// The step at which the embedded engine failed to start; `reason` is the operating
/// system's or the engine's own message. Carried by [`Error::Local`](super::Error::Local).
/// The outcome is kept for the process: every later call gets the same problem.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LocalProblem {
    /// No loopback port could be bound (or configured, or read back).
    Port {
        /// The system's or the engine's message.
        reason: String,
    },
    /// The engine's in-memory database could not be opened.
    Engine {
        /// The system's or the engine's message.
        reason: String,
    },
    /// The server's thread or its runtime could not be started.
    Thread {
        /// The system's or the engine's message.
        reason: String,
    },
    /// The server's thread stopped before it served.
    Stopped,
}

impl fmt::Display for LocalProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalProblem::Port { reason } => write!(f, "no loopback port: {reason}"),
            LocalProblem::Engine { reason } => write!(f, "the engine did not open: {reason}"),
            LocalProblem::Thread { reason } => write!(f, "the server did not start: {reason}"),
            LocalProblem::Stopped => f.write_str("the server stopped before it was ready"),
        }
    }
}
