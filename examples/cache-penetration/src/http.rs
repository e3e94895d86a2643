//! Just enough HTTP/1.1 for this service: requests with a Content-Length body (no chunked
//! uploads), keep-alive, and responses with a body of text or JSON.

use std::io::{self, BufRead, Read, Write};

const MAX_LINE_BYTES: u64 = 8 * 1024;
const MAX_HEADERS: usize = 100;
const MAX_BODY_BYTES: usize = 64 * 1024;

pub struct Request {
    pub method: String,
    /// Without its query string.
    pub path: String,
    pub body: Vec<u8>,
    /// The client asked to close the connection after the response.
    pub close: bool,
}

pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
    pub location: Option<String>,
}

impl Response {
    pub fn json(status: u16, body: String) -> Response {
        Response { status, content_type: "application/json", body, location: None }
    }

    pub fn text(status: u16, body: &str) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: format!("{body}\n"),
            location: None,
        }
    }

    pub fn no_content() -> Response {
        Response {
            status: 204,
            content_type: "text/plain; charset=utf-8",
            body: String::new(),
            location: None,
        }
    }
}

/// The next request on the connection; None when the client closed it between requests. A
/// malformed request is an `InvalidData` error, to be answered 400 before closing.
pub fn read_request(reader: &mut impl BufRead) -> io::Result<Option<Request>> {
    let Some(request_line) = read_line(reader)? else {
        return Ok(None);
    };
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid("malformed request line"));
    };
    let mut close = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return Err(invalid("unsupported HTTP version")),
    };
    let mut content_length = 0;
    for _ in 0..=MAX_HEADERS {
        let line = read_line(reader)?.ok_or_else(|| invalid("connection closed inside the headers"))?;
        if line.is_empty() {
            if content_length > MAX_BODY_BYTES {
                return Err(invalid("body too large"));
            }
            let mut body = vec![0; content_length];
            reader.read_exact(&mut body)?;
            let path = target.split('?').next().unwrap_or(target).to_string();
            return Ok(Some(Request { method: method.to_string(), path, body, close }));
        }
        let (name, value) = line.split_once(':').ok_or_else(|| invalid("malformed header"))?;
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => content_length = value.parse().map_err(|_| invalid("bad Content-Length"))?,
            "transfer-encoding" => return Err(invalid("chunked bodies are not supported")),
            "connection" if value.eq_ignore_ascii_case("close") => close = true,
            "connection" if value.eq_ignore_ascii_case("keep-alive") => close = false,
            _ => {}
        }
    }
    Err(invalid("too many headers"))
}

pub fn write_response(writer: &mut impl Write, response: &Response, close: bool) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", response.status, reason(response.status));
    if response.status != 204 {
        head.push_str(&format!(
            "Content-Type: {}\r\nContent-Length: {}\r\n",
            response.content_type,
            response.body.len()
        ));
    }
    if let Some(location) = &response.location {
        head.push_str(&format!("Location: {location}\r\n"));
    }
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    writer.write_all(head.as_bytes())?;
    writer.write_all(response.body.as_bytes())?;
    writer.flush()
}

/// A line without its CRLF, or None at the end of the stream before any byte of it.
fn read_line(reader: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut line = Vec::new();
    reader.by_ref().take(MAX_LINE_BYTES).read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Ok(None);
    }
    if !line.ends_with(b"\r\n") {
        return Err(invalid("line too long or not ended by CRLF"));
    }
    line.truncate(line.len() - 2);
    String::from_utf8(line).map(Some).map_err(|_| invalid("header is not UTF-8"))
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "",
    }
}

/// The value of `name` in an `application/x-www-form-urlencoded` body.
pub fn form_value(body: &[u8], name: &str) -> Option<String> {
    body.split(|&byte| byte == b'&').find_map(|pair| {
        let (key, value) = match pair.iter().position(|&byte| byte == b'=') {
            Some(equals) => (&pair[..equals], &pair[equals + 1..]),
            None => (pair, &pair[pair.len()..]),
        };
        (percent_decode(key)? == name).then(|| percent_decode(value)).flatten()
    })
}

/// None for a malformed escape or text that is not UTF-8.
fn percent_decode(encoded: &[u8]) -> Option<String> {
    let mut decoded = Vec::with_capacity(encoded.len());
    let mut bytes = encoded.iter();
    while let Some(&byte) = bytes.next() {
        decoded.push(match byte {
            b'+' => b' ',
            b'%' => {
                let high = (*bytes.next()? as char).to_digit(16)?;
                let low = (*bytes.next()? as char).to_digit(16)?;
                (high * 16 + low) as u8
            }
            other => other,
        });
    }
    String::from_utf8(decoded).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_keep_alive_requests_one_after_another() {
        let wire = b"POST /users?x=1 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /users/7 HTTP/1.1\r\nConnection: close\r\n\r\n";
        let mut reader = &wire[..];
        let first = read_request(&mut reader).unwrap().unwrap();
        assert_eq!(
            (first.method.as_str(), first.path.as_str(), &first.body[..], first.close),
            ("POST", "/users", &b"abc"[..], false)
        );
        let second = read_request(&mut reader).unwrap().unwrap();
        assert_eq!((second.method.as_str(), second.path.as_str(), second.close), ("GET", "/users/7", true));
        assert!(read_request(&mut reader).unwrap().is_none());
    }

    #[test]
    fn refuses_malformed_requests() {
        for wire in [
            &b"GET /\r\n\r\n"[..],
            b"GET / HTTP/2\r\n\r\n",
            b"GET / HTTP/1.1\nHost: x\n\n",
            b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        ] {
            let error = read_request(&mut &wire[..]).err().expect("an error");
            assert_eq!(error.kind(), io::ErrorKind::InvalidData, "{}", String::from_utf8_lossy(wire));
        }
    }

    #[test]
    fn decodes_form_values() {
        let body = b"name=Ada+Lovelace&email=ada%40example.com&bad=%zz";
        assert_eq!(form_value(body, "name").as_deref(), Some("Ada Lovelace"));
        assert_eq!(form_value(body, "email").as_deref(), Some("ada@example.com"));
        assert_eq!(form_value(body, "bad"), None);
        assert_eq!(form_value(body, "missing"), None);
    }
}
