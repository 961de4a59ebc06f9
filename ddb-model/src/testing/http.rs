//! HTTP/1.1 on the wire, as much as the proxy needs: one message read at a time from a
//! keep-alive connection (by `Content-Length` or chunked framing), and one request forwarded
//! on a fresh upstream connection.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Largest request or response head (request line and headers) the proxy accepts.
const MAX_HEAD: usize = 64 * 1024;
/// Largest body the proxy accepts.
const MAX_BODY: usize = 32 * 1024 * 1024;

/// `http://host:port/...` -> `host:port` (port 80 when absent).
pub(super) fn host_port(url: &str) -> String {
    let rest = url.trim().trim_start_matches("http://");
    let authority = rest.split('/').next().unwrap_or(rest);
    if authority.contains(':') { authority.to_owned() } else { format!("{authority}:80") }
}

/// Sends one request on a fresh upstream connection and reads its whole response.
pub(super) async fn forward(upstream: &str, request: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut conn = TcpStream::connect(upstream).await?;
    conn.write_all(request).await?;
    let mut buf = Vec::new();
    match read_message(&mut conn, &mut buf, false).await? {
        Some(response) => Ok(response.bytes()),
        None => Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "no response")),
    }
}

/// One HTTP/1.1 message: its head (up to and including the blank line) and its body, as
/// received (chunked bodies keep their framing).
pub(super) struct Message {
    pub(super) head: Vec<u8>,
    pub(super) body: Vec<u8>,
}

impl Message {
    pub(super) fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.head.len() + self.body.len());
        out.extend_from_slice(&self.head);
        out.extend_from_slice(&self.body);
        out
    }
}

fn invalid(msg: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.to_owned())
}

/// The value of header `name` (case-insensitive) in `head`.
pub(super) fn header(head: &[u8], name: &str) -> Option<String> {
    let text = std::str::from_utf8(head).ok()?;
    text.split("\r\n").skip(1).find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
    })
}

/// Reads more bytes into `buf`; false at end of stream.
async fn fill(stream: &mut (impl AsyncRead + Unpin), buf: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut chunk = [0u8; 16 * 1024];
    let n = stream.read(&mut chunk).await?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n > 0)
}

/// Reads one message from `stream` (bytes after it stay in `buf`). `None` when the stream
/// ends cleanly before a message starts. A response without a length is read to the end of
/// the stream.
pub(super) async fn read_message(
    stream: &mut (impl AsyncRead + Unpin),
    buf: &mut Vec<u8>,
    request: bool,
) -> std::io::Result<Option<Message>> {
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(invalid("head too large"));
        }
        if !fill(stream, buf).await? {
            return if buf.is_empty() { Ok(None) } else { Err(invalid("truncated head")) };
        }
    };
    let head: Vec<u8> = buf.drain(..head_end).collect();
    let chunked = header(&head, "transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let length = match header(&head, "content-length") {
        Some(v) => Some(v.parse::<usize>().map_err(|_| invalid("bad content-length"))?),
        None => None,
    };
    let status_without_body = !request
        && std::str::from_utf8(&head)
            .ok()
            .and_then(|t| t.split(' ').nth(1))
            .is_some_and(|code| code.starts_with('1') || code == "204" || code == "304");
    let body = if status_without_body {
        Vec::new()
    } else if chunked {
        read_chunked(stream, buf).await?
    } else if let Some(len) = length {
        if len > MAX_BODY {
            return Err(invalid("body too large"));
        }
        while buf.len() < len {
            if !fill(stream, buf).await? {
                return Err(invalid("truncated body"));
            }
        }
        buf.drain(..len).collect()
    } else if request {
        Vec::new()
    } else {
        while fill(stream, buf).await? {
            if buf.len() > MAX_BODY {
                return Err(invalid("body too large"));
            }
        }
        std::mem::take(buf)
    };
    Ok(Some(Message { head, body }))
}

/// Reads a chunked body, framing included, up to and including its last chunk and trailers.
async fn read_chunked(
    stream: &mut (impl AsyncRead + Unpin),
    buf: &mut Vec<u8>,
) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                break i + 2;
            }
            if buf.len() > MAX_HEAD || !fill(stream, buf).await? {
                return Err(invalid("bad chunk header"));
            }
        };
        let line = std::str::from_utf8(&buf[..line_end - 2]).map_err(|_| invalid("chunk"))?;
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| invalid("chunk size"))?;
        if body.len() + size > MAX_BODY {
            return Err(invalid("body too large"));
        }
        body.extend(buf.drain(..line_end));
        if size == 0 {
            // Trailers, then a blank line.
            loop {
                let end = loop {
                    if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                        break i + 2;
                    }
                    if buf.len() > MAX_HEAD || !fill(stream, buf).await? {
                        return Err(invalid("bad trailer"));
                    }
                };
                let blank = end == 2;
                body.extend(buf.drain(..end));
                if blank {
                    return Ok(body);
                }
            }
        }
        while buf.len() < size + 2 {
            if !fill(stream, buf).await? {
                return Err(invalid("truncated chunk"));
            }
        }
        body.extend(buf.drain(..size + 2));
    }
}
