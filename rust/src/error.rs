use std::fmt;

/// Why a heapscope call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// `start` while the profiler is already running (the running session is untouched).
    AlreadyRunning,
    /// A path given to the engine contains a NUL byte.
    InvalidPath,
    /// The engine refused the call: `what` names it (e.g. a dump with no session, an
    /// unwritable path, a configuration out of range).
    Failed { what: &'static str },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::AlreadyRunning => write!(f, "the heapscope profiler is already running"),
            Error::InvalidPath => write!(f, "path contains a NUL byte"),
            Error::Failed { what } => write!(f, "heapscope: {} failed", what),
        }
    }
}

impl std::error::Error for Error {}
