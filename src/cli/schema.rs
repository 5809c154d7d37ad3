//! `tengen schema`: write the AsyncAPI document and the JSON Schemas of the WebSocket
//! protocol, and the OpenAPI document of the HTTP routes (`client-protocol/schema/` keeps
//! them; a test fails when they differ from what this writes).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use tengen::protocol::schema;

/// Arguments of `tengen schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directory to write asyncapi.json, client.json, server.json and openapi.json into.
    #[arg(long, default_value = "client-protocol/schema")]
    pub out: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let openapi: schema::Document = ("openapi.json", tengen::net::openapi::document);
    for (name, document) in schema::FILES.iter().chain([&openapi]) {
        let path = args.out.join(name);
        std::fs::write(&path, schema::to_file_text(&document()))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
