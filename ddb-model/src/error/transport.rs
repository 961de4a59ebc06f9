//! How a request failed to get a usable answer: [`TransportKind`] (in
//! [`Error::Transport`](super::Error::Transport)), the 5xx answer kept as its source, and the
//! classification of connector errors.

use std::fmt;

/// How a request failed to get a usable answer ([`Error::Transport`](super::Error::Transport)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[non_exhaustive]
pub enum TransportKind {
    /// The connection could not be established (refused, unreachable): the request was not
    /// sent.
    #[error("cannot connect")]
    Connect,
    /// The connection failed while the request was sent or its response awaited (reset, or
    /// closed before the response was complete).
    #[error("connection failed")]
    Dispatch,
    /// No answer within the configured timeouts.
    #[error("timed out")]
    Timeout,
    /// A response arrived but could not be read.
    #[error("unreadable response")]
    Response,
    /// The service, or something in front of it, answered with an HTTP 5xx status.
    #[error("server error (HTTP {status})")]
    Server {
        /// The HTTP status.
        status: u16,
    },
    /// The SDK could not build or sign the request; nothing was sent.
    #[error("the request could not be built")]
    Construction,
}

impl TransportKind {
    /// True when sending the request again may succeed (every kind but
    /// [`Construction`](TransportKind::Construction)).
    pub fn is_transient(self) -> bool {
        !matches!(self, TransportKind::Construction)
    }

    /// True when the request may have reached the service.
    pub(crate) fn may_have_reached(self) -> bool {
        !matches!(self, TransportKind::Connect | TransportKind::Construction)
    }
}

/// The service's answer with an HTTP 5xx status, as the source of [`Error::Transport`](super::Error::Transport).
#[derive(Debug)]
pub(crate) struct ServerAnswer {
    pub(crate) status: u16,
    pub(crate) code: Option<String>,
    pub(crate) message: Option<String>,
}

impl fmt::Display for ServerAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        if let Some(code) = &self.code {
            write!(f, " {code}")?;
        }
        if let Some(message) = &self.message {
            write!(f, ": {message}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ServerAnswer {}

/// True when a connector error means the connection was never established (so the request
/// never left): a refused or unreachable address, or a failed name lookup.
pub(crate) fn is_connect_failure(err: &aws_sdk_dynamodb::error::ConnectorError) -> bool {
    use std::io::ErrorKind as K;
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                K::ConnectionRefused
                    | K::AddrNotAvailable
                    | K::AddrInUse
                    | K::NetworkUnreachable
                    | K::HostUnreachable
            )
        {
            return true;
        }
        // hyper-util's connect error ("client error (Connect)") and the SDK's DNS error.
        let text = e.to_string();
        if text == "client error (Connect)" || text.starts_with("dns error") {
            return true;
        }
        next = e.source();
    }
    false
}
