//! The HTTP server: `WORKERS` threads, each serving one connection at a time with its own
//! Redis and PostgreSQL connections, and the routes.

use crate::bloom;
use crate::config::Config;
use crate::http::{self, Request, Response};
use crate::metrics::{Counter, Metrics};
use crate::users::Backends;
use crate::Error;
use std::io::{self, BufReader, BufWriter};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// An idle keep-alive connection is closed after this long, freeing its worker.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

struct Shared {
    config: Config,
    metrics: Metrics,
}

/// Serves until the process is stopped.
pub fn serve(config: Config) -> Result<(), Error> {
    let listener = TcpListener::bind(&config.listen)?;
    eprintln!(
        "users-service: serving http://{} with {} workers, {}",
        listener.local_addr()?,
        config.workers,
        match &config.filter_key {
            Some(key) => format!("filter {key}"),
            None => "no filter (BLOOM_FILTER=off)".to_string(),
        }
    );
    let shared = Arc::new(Shared { config, metrics: Metrics::default() });
    let mut workers = Vec::new();
    for _ in 0..shared.config.workers {
        let listener = listener.try_clone()?;
        let shared = Arc::clone(&shared);
        workers.push(thread::spawn(move || Worker { shared, backends: None }.run(listener)));
    }
    for worker in workers {
        worker.join().map_err(|_| "a worker panicked")?;
    }
    Ok(())
}

struct Worker {
    shared: Arc<Shared>,
    /// Connected on first use, and dropped after an error so that the next request reconnects.
    backends: Option<Backends>,
}

impl Worker {
    fn run(mut self, listener: TcpListener) {
        for connection in listener.incoming() {
            match connection {
                // Its I/O errors (idle timeout, client gone) end that connection only.
                Ok(stream) => {
                    let _ = self.serve_connection(stream);
                }
                Err(error) => {
                    eprintln!("users-service: accept: {error}");
                    // Out of file descriptors, say: retrying at once would spin.
                    thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }

    fn serve_connection(&mut self, stream: TcpStream) -> io::Result<()> {
        stream.set_read_timeout(Some(IDLE_TIMEOUT))?;
        stream.set_nodelay(true)?;
        let mut reader = BufReader::new(stream.try_clone()?);
        let mut writer = BufWriter::new(stream);
        loop {
            let request = match http::read_request(&mut reader) {
                Ok(Some(request)) => request,
                Ok(None) => return Ok(()),
                Err(error) if error.kind() == io::ErrorKind::InvalidData => {
                    return http::write_response(&mut writer, &Response::text(400, &error.to_string()), true);
                }
                Err(error) => return Err(error),
            };
            let response = self.handle(&request);
            http::write_response(&mut writer, &response, request.close)?;
            if request.close {
                return Ok(());
            }
        }
    }

    fn handle(&mut self, request: &Request) -> Response {
        self.route(request).unwrap_or_else(|error| {
            self.shared.metrics.count(Counter::Errors);
            eprintln!("users-service: {} {}: {error}", request.method, request.path);
            // A connection may be what failed: the next request opens new ones.
            self.backends = None;
            Response::text(500, "internal error")
        })
    }

    fn route(&mut self, request: &Request) -> Result<Response, Error> {
        let segments: Vec<&str> = request.path.trim_start_matches('/').split('/').collect();
        match (request.method.as_str(), segments.as_slice()) {
            ("GET", ["metrics"]) => self.metrics_page(),
            (method, ["users", rest @ ..]) => {
                self.shared.metrics.count(Counter::Requests);
                self.users(method, rest, &request.body)
            }
            (_, ["metrics"]) => Ok(Response::text(405, "GET only")),
            _ => Ok(Response::text(404, "no such path")),
        }
    }

    fn users(&mut self, method: &str, rest: &[&str], body: &[u8]) -> Result<Response, Error> {
        let Shared { config, metrics } = &*self.shared;
        let filter = config.filter_key.as_deref();
        let id = match rest {
            [] => None,
            [id] => match id.parse::<i64>() {
                Ok(id) => Some(id),
                Err(_) => return Ok(Response::text(400, "a user ID is an integer")),
            },
            _ => return Ok(Response::text(404, "no such path")),
        };
        let backends = connected(&mut self.backends, config)?;
        Ok(match (method, id) {
            ("GET", Some(id)) => match backends.find_user(id, filter, metrics)? {
                Some(user) => Response::json(200, user),
                None => Response::text(404, "no such user"),
            },
            ("POST", None) => {
                let (Some(name), Some(email)) =
                    (http::form_value(body, "name"), http::form_value(body, "email"))
                else {
                    return Ok(Response::text(
                        400,
                        "send name=...&email=... (application/x-www-form-urlencoded)",
                    ));
                };
                let user = backends.create_user(&name, &email, filter)?;
                metrics.count(Counter::UsersCreated);
                Response {
                    location: Some(format!("/users/{}", user.id)),
                    ..Response::json(201, user.to_json())
                }
            }
            ("DELETE", Some(id)) => {
                if backends.delete_user(id)? {
                    metrics.count(Counter::UsersDeleted);
                    Response::no_content()
                } else {
                    Response::text(404, "no such user")
                }
            }
            (_, Some(_)) => Response::text(405, "GET or DELETE"),
            (_, None) => Response::text(405, "POST only"),
        })
    }

    /// The counters, and what `BF.INFO` says of the filter.
    fn metrics_page(&mut self) -> Result<Response, Error> {
        let Shared { config, metrics } = &*self.shared;
        let mut page = metrics.render();
        if let Some(key) = &config.filter_key {
            let redis = connected(&mut self.backends, config)?.redis();
            if let Some(info) = bloom::info(redis, key)? {
                page.push_str(&format!(
                    "filter_items {}\nfilter_capacity {}\nfilter_sub_filters {}\nfilter_bytes {}\n\
                     filter_estimated_error_rate {}\nfilter_target_error_rate {}\n",
                    info.items,
                    info.capacity,
                    info.sub_filters,
                    info.bytes,
                    info.estimated_error_rate,
                    config.filter_error_rate
                ));
            }
        }
        Ok(Response { content_type: "text/plain; version=0.0.4", ..Response::text(200, page.trim_end()) })
    }
}

fn connected<'a>(backends: &'a mut Option<Backends>, config: &Config) -> Result<&'a mut Backends, Error> {
    if backends.is_none() {
        *backends = Some(Backends::connect(config)?);
    }
    backends.as_mut().ok_or_else(|| "not connected".into())
}
