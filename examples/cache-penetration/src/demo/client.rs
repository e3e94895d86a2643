//! An HTTP/1.1 client for the service, on one keep-alive connection.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub struct HttpClient {
    address: String,
    connection: Option<BufReader<TcpStream>>,
}

pub struct Reply {
    pub status: u16,
    pub body: String,
}

impl HttpClient {
    pub fn new(address: &str) -> HttpClient {
        HttpClient { address: address.to_string(), connection: None }
    }

    pub fn get(&mut self, path: &str) -> io::Result<Reply> {
        self.send("GET", path, "")
    }

    /// After an error the connection is dropped; the next request opens another.
    pub fn send(&mut self, method: &str, path: &str, form: &str) -> io::Result<Reply> {
        let reply = self.exchange(method, path, form);
        if reply.is_err() {
            self.connection = None;
        }
        reply
    }

    /// The service's `/metrics`, by name.
    pub fn metrics(&mut self) -> io::Result<HashMap<String, f64>> {
        let reply = self.get("/metrics")?;
        if reply.status != 200 {
            return Err(io::Error::other(format!("/metrics answered {}: {}", reply.status, reply.body)));
        }
        Ok(reply
            .body
            .lines()
            .filter_map(|line| line.split_once(' '))
            .filter_map(|(name, value)| Some((name.to_string(), value.parse().ok()?)))
            .collect())
    }

    fn exchange(&mut self, method: &str, path: &str, form: &str) -> io::Result<Reply> {
        let connection = match &mut self.connection {
            Some(connection) => connection,
            None => {
                let stream = TcpStream::connect(&self.address)?;
                stream.set_nodelay(true)?;
                stream.set_read_timeout(Some(Duration::from_secs(30)))?;
                self.connection.insert(BufReader::new(stream))
            }
        };
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Content-Length: {}\r\n\r\n{form}",
            self.address,
            form.len()
        );
        connection.get_mut().write_all(request.as_bytes())?;

        let mut line = String::new();
        connection.read_line(&mut line)?;
        let status =
            line.split(' ').nth(1).and_then(|code| code.parse().ok()).ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, format!("bad status line {line:?}"))
            })?;
        let mut content_length = 0;
        let mut close = false;
        loop {
            line.clear();
            if connection.read_line(&mut line)? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => {
                        content_length =
                            value.trim().parse().map_err(|_| io::Error::other("bad Content-Length"))?
                    }
                    "connection" => close = value.trim().eq_ignore_ascii_case("close"),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; content_length];
        connection.read_exact(&mut body)?;
        if close {
            self.connection = None;
        }
        let body = String::from_utf8(body).map_err(|_| io::Error::other("body is not UTF-8"))?;
        Ok(Reply { status, body })
    }
}
