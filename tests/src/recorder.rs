//! An HTTP server on 127.0.0.1 that records the head of every request it
//! gets, for tests that must check what actually reached the server (for
//! example that the host added a credential, or that it did not).
//!
//! Routes, each the kind of server that hands a credential back:
//!
//! | path | answer |
//! |---|---|
//! | `/redirect?to=URL` | 302 to URL |
//! | `/gzip` | the echo below, gzip-compressed if the request accepts gzip |
//! | `/gzip-always` | the echo, gzip-compressed whatever the request accepts |
//! | `/raw-header` | the echo, and the `Authorization` value in a header that is not ASCII (`é … ü` as UTF-8) |
//! | `/trailers` | a chunked body with the `Authorization` value in a trailer |
//! | `/encoded` | the `Authorization` value spelled as JSON (`\/`), percent-encoding (both cases), a form, HTML and base64 (`Basic user:…`) |
//! | `/slow` | the echo after 600 ms |
//! | anything else | 200 with a JSON body `{"path": …, "head": …}` echoing the request back, the way "show my headers" endpoints do |

use crate::server::{Request, Response, Server};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running recording server.
pub struct Recorder {
    /// Where it listens.
    pub addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    /// Start serving on an ephemeral port.
    pub fn start() -> Self {
        let heads = Arc::new(Mutex::new(Vec::new()));
        let record = heads.clone();
        let server = Server::start(move |request| {
            let head = request.head();
            record.lock().expect("lock").push(head.clone());
            respond(request, &head).close()
        });
        Recorder { addr: server.addr, heads }
    }

    /// `http://127.0.0.1:PORT<path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The heads of the requests received so far, in order.
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("lock").clone()
    }
}

fn respond(request: &Request, head: &str) -> Response {
    let path = request.target.as_str();
    let echo = serde_json::json!({"path": path, "head": head}).to_string().into_bytes();
    let json = |status| Response::new(status).header("Content-Type", "application/json");
    let auth = request.header("authorization").unwrap_or("none").to_owned();
    let accepts_gzip = request.header("accept-encoding").is_some_and(|v| v.contains("gzip"));
    let route = path.split('?').next().unwrap_or("");
    match route {
        "/redirect" => {
            let to = path.strip_prefix("/redirect?to=").unwrap_or("/");
            Response::new(302).header("Location", to)
        }
        "/gzip" | "/gzip-always" if accepts_gzip || route == "/gzip-always" => {
            json(200).header("Content-Encoding", "gzip").body(gzip(&echo))
        }
        "/raw-header" => {
            let raw = format!("\u{e9} {auth} \u{fc}").into_bytes();
            json(200).header("X-Echo-Raw", raw).body(echo)
        }
        "/trailers" => Response::new(200)
            .header("Content-Type", "text/plain")
            .trailer("X-Echo-Trailer", &auth)
            .body("ok"),
        "/encoded" => {
            let basic = format!("user:{auth}");
            let body = format!(
                "{{\"json\":\"{}\",\"percent\":\"{}\",\"lower\":\"{}\",\"form\":\"{}\",\
                 \"html\":\"{}\",\"basic\":\"{}\",\"basic_url\":\"{}\"}}",
                auth.replace('\\', "\\\\").replace('"', "\\\"").replace('/', "\\/"),
                percent(&auth, true, false),
                percent(&auth, false, false),
                percent(&auth, true, true),
                auth.replace('&', "&amp;").replace('<', "&lt;").replace('"', "&quot;"),
                base64(basic.as_bytes(), false),
                base64(basic.as_bytes(), true),
            );
            json(200).body(body)
        }
        "/slow" => json(200).body(echo).after(Duration::from_millis(600)),
        _ => {
            let first = head
                .lines()
                .find(|l| l.to_ascii_lowercase().starts_with("authorization:"))
                .unwrap_or("none");
            json(200).header("X-Echo-Head", first).body(echo)
        }
    }
}

/// Percent-encoding of all but RFC 3986 unreserved characters, in upper or
/// lower case hex; `form` writes a space as `+`.
pub fn percent(text: &str, upper: bool, form: bool) -> String {
    text.bytes()
        .map(|b| match b {
            b' ' if form => "+".to_owned(),
            b if b.is_ascii_alphanumeric() || b"-._~".contains(&b) => char::from(b).to_string(),
            b if upper => format!("%{b:02X}"),
            b => format!("%{b:02x}"),
        })
        .collect()
}

/// Base64: the standard alphabet with padding, or URL-safe without.
pub fn base64(bytes: &[u8], url: bool) -> String {
    let alphabet: &[u8; 64] = if url {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    };
    let mut out = String::new();
    for group in bytes.chunks(3) {
        let n = group.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=group.len() {
            out.push(char::from(alphabet[(n >> (18 - 6 * i) & 63) as usize]));
        }
        if !url {
            out.push_str(&"=".repeat(3 - group.len()));
        }
    }
    out
}

/// A real gzip stream (one deflate block with the fixed Huffman code, all
/// literals): every byte is re-coded, so no byte-wise mask can find text in
/// it, yet any decompressor restores it.
fn gzip(data: &[u8]) -> Vec<u8> {
    /// Deflate writes values least significant bit first.
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        filled: u32,
    }
    impl Bits {
        fn put(&mut self, value: u32, bits: u32) {
            self.acc |= u64::from(value) << self.filled;
            self.filled += bits;
            while self.filled >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.filled -= 8;
            }
        }
        /// Huffman codes go most significant bit first.
        fn code(&mut self, value: u32, bits: u32) {
            self.put(value.reverse_bits() >> (32 - bits), bits);
        }
    }
    let mut bits = Bits { out: vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255], acc: 0, filled: 0 };
    bits.put(1, 1); // the last block
    bits.put(1, 2); // fixed Huffman code
    for &b in data {
        if b < 144 {
            bits.code(0x30 + u32::from(b), 8);
        } else {
            bits.code(0x190 + u32::from(b) - 144, 9);
        }
    }
    bits.code(0, 7); // end of block
    if bits.filled > 0 {
        bits.put(0, 8 - bits.filled);
    }
    let mut out = bits.out;
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    out.extend_from_slice(&(!crc).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_known_answers() {
        assert_eq!(base64(b"user:pass", false), "dXNlcjpwYXNz");
        assert_eq!(base64(b"ab", false), "YWI=");
        assert_eq!(base64(b"a", false), "YQ==");
        assert_eq!(base64(&[0xfb, 0xff], true), "-_8");
    }

    #[test]
    fn gzip_is_well_formed_and_hides_the_text() {
        let data = b"Bearer s3cr3t-tok-9f8e7d6c";
        let z = gzip(data);
        assert_eq!(&z[..3], &[0x1f, 0x8b, 8]);
        assert!(!z.windows(6).any(|w| w == b"s3cr3t"));
        assert_eq!(u32::from_le_bytes(z[z.len() - 4..].try_into().unwrap()), data.len() as u32);
    }
}
