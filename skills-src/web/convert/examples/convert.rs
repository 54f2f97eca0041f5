//! Convert a saved HTML file as the `web` skill would, natively:
//! `cargo run -p web-convert --example convert -- page.html https://example.com/page
//! [content-type]`.

use std::time::{SystemTime, UNIX_EPOCH};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(file), Some(url)) = (args.next(), args.next()) else {
        return Err("usage: convert FILE.html URL [CONTENT-TYPE]".into());
    };
    let content_type = args.next();
    let bytes = std::fs::read(&file)?;
    let page = web_convert::decode(&bytes, content_type.as_deref());
    let article = web_convert::html_to_markdown(&page.text, &url)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    eprintln!(
        "encoding {} ({:?}), title {:?}, {} text chars",
        page.encoding, page.source, article.title, article.text_chars
    );
    print!(
        "{}",
        article.to_document(web_convert::Provenance {
            url: &url,
            fetched_at: now,
            truncated: false
        })
    );
    Ok(())
}
