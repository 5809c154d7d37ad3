//! Configuration: defaults < file < `TENGEN_*` < flags, and every way to get it wrong
//! fails start-up with a message that names the file, variable or flag and the key.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tengen::config::{Config, ConfigError, FlagSetting, JwtAlgorithm, LogFormat, SyncSetting};

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write config");
    path
}

fn set(arg: &str) -> FlagSetting {
    FlagSetting::parse_set(arg).expect("KEY=VALUE")
}

/// The error's full text, and a check that it mentions every one of `needles`.
fn refused(result: Result<Config, ConfigError>, needles: &[&str]) -> String {
    let err = result.expect_err("the configuration must be refused");
    let text = err.to_string();
    for needle in needles {
        assert!(text.contains(needle), "`{needle}` missing from: {text}");
    }
    text
}

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn no_file_and_no_variables_give_the_defaults() {
    let config = Config::load(None, env(&[("PATH", "/bin"), ("HOME", "/root")])).expect("load");
    assert_eq!(config, Config::default());
    assert_eq!(config.listen.to_string(), "127.0.0.1:7480");
}

#[test]
fn file_then_environment_then_flags() {
    let dir = tempfile::tempdir().expect("dir");
    let file = write(
        dir.path(),
        "tengen.toml",
        r#"
listen = "0.0.0.0:9000"
[limits]
burst = 10
messages_per_second = 7
[log]
format = "json"
"#,
    );
    let from_file = Config::load(Some(&file), env(&[])).expect("file");
    assert_eq!(from_file.limits.burst, 10);
    assert_eq!(from_file.limits.messages_per_second, 7);
    assert_eq!(from_file.listen.to_string(), "0.0.0.0:9000");
    assert_eq!(from_file.log.format, LogFormat::Json);
    // Keys the file does not mention keep their defaults.
    assert_eq!(
        from_file.limits.outbound_queue,
        Config::default().limits.outbound_queue
    );

    let vars = env(&[
        ("TENGEN_LIMITS__BURST", "20"),
        ("TENGEN_STORE__SYNC", "normal"),
        ("TENGEN_CLOCK__LAG__QUOTA_MAX_MS", "8000"),
        ("TENGEN_DATA_DIR", "/var/lib/tengen"),
    ]);
    let from_env = Config::load(Some(&file), vars.clone()).expect("env");
    assert_eq!(from_env.limits.burst, 20, "the environment beats the file");
    assert_eq!(
        from_env.limits.messages_per_second, 7,
        "the file still counts"
    );
    assert_eq!(from_env.store.sync, SyncSetting::Normal);
    assert_eq!(from_env.clock.lag.quota_max_ms, 8000);
    assert_eq!(from_env.data_dir, PathBuf::from("/var/lib/tengen"));

    let flags = [
        set("limits.burst=30"),
        set("listen=127.0.0.1:9001"),
        set("auth.anonymous_spectators=false"),
    ];
    let from_flags = Config::load_with_flags(Some(&file), vars, &flags).expect("flags");
    assert_eq!(from_flags.limits.burst, 30, "a flag beats the environment");
    assert_eq!(from_flags.listen.to_string(), "127.0.0.1:9001");
    assert!(!from_flags.auth.anonymous_spectators);
    assert_eq!(
        from_flags.store.sync,
        SyncSetting::Normal,
        "the environment still counts"
    );
    assert_eq!(
        from_flags.limits.messages_per_second, 7,
        "the file still counts"
    );
}

#[test]
fn strings_that_look_like_numbers_stay_strings() {
    let config = Config::load(
        None,
        env(&[
            ("TENGEN_AUTH__SECRET", "12345678901234567890123456789012"),
            ("TENGEN_AUTH__AUDIENCE", "true"),
            ("TENGEN_DATA_DIR", "2024"),
        ]),
    )
    .expect("load");
    assert_eq!(
        config.auth.secret.as_deref(),
        Some("12345678901234567890123456789012")
    );
    assert_eq!(config.auth.audience.as_deref(), Some("true"));
    assert_eq!(config.data_dir, PathBuf::from("2024"));
}

#[test]
fn tengen_log_is_the_log_filter_not_a_key() {
    let config = Config::load(None, env(&[("TENGEN_LOG", "tengen=debug,warn")])).expect("load");
    assert_eq!(config.log.filter, "tengen=debug,warn");
    // The full key is more specific and wins.
    let both = Config::load(
        None,
        env(&[("TENGEN_LOG__FILTER", "trace"), ("TENGEN_LOG", "debug")]),
    )
    .expect("load");
    assert_eq!(both.log.filter, "trace");
    // TENGEN_LOG__FORMAT is the key log.format.
    let json = Config::load(None, env(&[("TENGEN_LOG__FORMAT", "json")])).expect("load");
    assert_eq!(json.log.format, LogFormat::Json);
    refused(
        Config::load(None, env(&[("TENGEN_LOG", "tengen=loud")])),
        &["log.filter", "TENGEN_LOG"],
    );
}

#[test]
fn an_unknown_key_in_the_file_is_named_with_its_line() {
    let dir = tempfile::tempdir().expect("dir");
    let file = write(dir.path(), "t.toml", "[limits]\nburst = 5\nburts = 3\n");
    refused(
        Config::load(Some(&file), env(&[])),
        &[
            &file.display().to_string(),
            "burts",
            "line 3",
            "unknown field",
        ],
    );
    let section = write(dir.path(), "s.toml", "[limit]\nburst = 5\n");
    refused(
        Config::load(Some(&section), env(&[])),
        &[&section.display().to_string(), "limit", "line 1"],
    );
}

#[test]
fn a_value_of_the_wrong_type_in_the_file_is_named() {
    let dir = tempfile::tempdir().expect("dir");
    let file = write(dir.path(), "t.toml", "[limits]\nburst = \"many\"\n");
    refused(
        Config::load(Some(&file), env(&[])),
        &[
            &file.display().to_string(),
            "burst",
            "line 2",
            "expected u32",
        ],
    );
    let sync = write(dir.path(), "s.toml", "[store]\nsync = \"sometimes\"\n");
    refused(
        Config::load(Some(&sync), env(&[])),
        &[&sync.display().to_string(), "sync", "sometimes"],
    );
    let broken = write(dir.path(), "b.toml", "[limits\n");
    refused(
        Config::load(Some(&broken), env(&[])),
        &[&broken.display().to_string(), "line 1"],
    );
}

#[test]
fn a_missing_file_is_named() {
    let missing = Path::new("/nonexistent/tengen.toml");
    refused(
        Config::load(Some(missing), env(&[])),
        &["/nonexistent/tengen.toml", "cannot read"],
    );
}

#[test]
fn an_unknown_environment_variable_is_named() {
    refused(
        Config::load(None, env(&[("TENGEN_LIMITS__BURTS", "3")])),
        &[
            "TENGEN_LIMITS__BURTS",
            "limits.burts",
            "unknown field `burts`",
        ],
    );
    refused(
        Config::load(None, env(&[("TENGEN_PORT", "7480")])),
        &["TENGEN_PORT", "unknown field `port`"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_LIMITS____BURST", "3")])),
        &["TENGEN_LIMITS____BURST", "does not name a setting"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_", "3")])),
        &["TENGEN_ ", "does not name a setting"],
    );
    // A value where a section is expected.
    refused(
        Config::load(None, env(&[("TENGEN_LIMITS", "3")])),
        &["TENGEN_LIMITS", "`limits`"],
    );
    // `tengen bot`'s variables are not the server's settings.
    Config::load(None, env(&[("TENGEN_BOT_TOKEN", "x")])).expect("the bot's token");
    // Nor is `tengen store migrate`'s target.
    Config::load(
        None,
        env(&[("TENGEN_MIGRATE_TO", "postgres://u:p@127.0.0.1:1/x")]),
    )
    .expect("the migration's target");
    refused(
        Config::load(None, env(&[("TENGEN_BOT__TOKEN", "x")])),
        &["TENGEN_BOT__TOKEN", "unknown field `bot`"],
    );
    // Variables of other programs are none of our business.
    Config::load(None, env(&[("TENGENX", "1"), ("RUST_LOG", "x")])).expect("ignored");
}

#[test]
fn a_value_of_the_wrong_type_in_the_environment_is_named() {
    refused(
        Config::load(None, env(&[("TENGEN_LIMITS__BURST", "many")])),
        &["TENGEN_LIMITS__BURST", "limits.burst", "expected u32"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_LIMITS__BURST", "-1")])),
        &["TENGEN_LIMITS__BURST", "limits.burst"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_AUTH__ANONYMOUS_SPECTATORS", "maybe")])),
        &[
            "TENGEN_AUTH__ANONYMOUS_SPECTATORS",
            "auth.anonymous_spectators",
        ],
    );
    refused(
        Config::load(None, env(&[("TENGEN_AUTH__ALGORITHM", "HS512")])),
        &["TENGEN_AUTH__ALGORITHM", "auth.algorithm", "HS512"],
    );
}

#[test]
fn a_bad_flag_is_named() {
    refused(
        Config::load_with_flags(None, env(&[]), &[set("limits.burst=lots")]),
        &["--set limits.burst=lots", "limits.burst", "expected u32"],
    );
    refused(
        Config::load_with_flags(None, env(&[]), &[set("limits.nope=1")]),
        &["--set limits.nope=1", "unknown field `nope`"],
    );
    assert!(FlagSetting::parse_set("limits.burst").is_err(), "no `=`");
    assert!(
        FlagSetting::parse_set("limits..burst=1").is_err(),
        "empty key part"
    );
}

#[test]
fn a_bad_listen_address_is_named_wherever_it_comes_from() {
    let dir = tempfile::tempdir().expect("dir");
    let file = write(dir.path(), "t.toml", "listen = \"localhost\"\n");
    refused(
        Config::load(Some(&file), env(&[])),
        &[&file.display().to_string(), "listen", "socket address"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_LISTEN", "0.0.0.0")])),
        &["TENGEN_LISTEN", "socket address"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_LISTEN", "0.0.0.0:99999")])),
        &["TENGEN_LISTEN", "socket address"],
    );
    refused(
        Config::load_with_flags(None, env(&[]), &[set("listen=:7480")]),
        &["--set listen=:7480", "socket address"],
    );
}

#[tokio::test]
async fn an_address_that_cannot_be_bound_stops_the_server_with_its_name() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr");
    let dir = tempfile::tempdir().expect("dir");
    let config = Config {
        listen: addr,
        data_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let err = match tengen::server::Server::start(config).await {
        Ok(_) => panic!("{addr} is taken; the server must not start"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(&addr.to_string()), "{err}");
    assert!(err.contains("cannot listen"), "{err}");
}

#[test]
fn values_out_of_range_are_named_with_their_source() {
    let dir = tempfile::tempdir().expect("dir");
    let file = write(dir.path(), "t.toml", "[limits]\nmessages_per_second = 0\n");
    refused(
        Config::load(Some(&file), env(&[])),
        &[
            "limits.messages_per_second",
            "at least 1",
            &file.display().to_string(),
        ],
    );
    refused(
        Config::load(None, env(&[("TENGEN_LIMITS__MAX_MESSAGE_BYTES", "100000")])),
        &[
            "limits.max_message_bytes",
            "limits.max_frame_bytes",
            "TENGEN_LIMITS__MAX_MESSAGE_BYTES",
        ],
    );
    refused(
        Config::load_with_flags(None, env(&[]), &[set("limits.idle_timeout_secs=20")]),
        &["limits.idle_timeout_secs", "limits.heartbeat_secs", "--set"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_STORE__GROUP_WAIT_US", "250000")])),
        &[
            "store.group_wait_us",
            "100000",
            "TENGEN_STORE__GROUP_WAIT_US",
        ],
    );
    refused(
        Config::load(None, env(&[("TENGEN_AUTH__ALGORITHM", "RS256")])),
        &["auth.public_key_file", "RS256"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_AUTH__PUBLIC_KEY_FILE", "/k.pem")])),
        &["auth.public_key_file", "HS256"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_AUTH__SECRET", "")])),
        &["auth.secret", "empty"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_CLOCK__LIMITS__MAX_MAIN_MS", "0")])),
        &["clock.limits.max_main_ms"],
    );
}

/// Every node of the cluster example starts: its `TENGEN_*` environment, with the
/// variables the operator exports filled in, is a valid configuration.
#[test]
fn the_cluster_examples_environment_is_a_valid_configuration() {
    let text = std::fs::read_to_string(repo_file("deploy/cluster/compose.yaml")).expect("read");
    let operators = |value: &str| {
        // `${NAME:?message}` is the operator's export.
        let mut out = String::new();
        let mut rest = value;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find('}').expect("a closing brace") + start;
            out.push_str("operator-chosen-value-0123456789abcdef");
            rest = &rest[end + 1..];
        }
        out + rest
    };
    let vars: Vec<(String, String)> = text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("TENGEN_"))
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| {
            let v = v.trim().trim_matches('\'').trim_matches('"');
            (k.to_string(), operators(v))
        })
        .collect();
    assert!(
        vars.iter()
            .any(|(k, _)| k == "TENGEN_AUTH__TRUSTED_PROXIES"),
        "{vars:?}"
    );
    let config = Config::load(None, vars).expect("the cluster example's environment loads");
    assert!(
        config.auth.trusted_proxies[0].contains("172.18.0.5".parse().unwrap()),
        "the proxy's network"
    );
}

#[test]
fn the_example_file_is_exactly_the_defaults() {
    let path = repo_file("deploy/tengen.toml");
    let config = Config::load(Some(&path), env(&[])).expect("deploy/tengen.toml loads");
    assert_eq!(
        config,
        Config::default(),
        "deploy/tengen.toml drifted from the defaults"
    );

    // Every key with a default value is written out (not only commented), and every
    // optional key is shown commented out.
    let text = std::fs::read_to_string(&path).expect("read");
    let file: toml::Table = text.parse().expect("TOML");
    let defaults = toml::Table::try_from(Config::default()).expect("table");
    assert_eq!(
        leaves(&file, ""),
        leaves(&defaults, ""),
        "keys in the example"
    );
    for optional in [
        "secret",
        "public_key_file",
        "issuer",
        "audience",
        "dev_login",
        "public_url",
        "postgres_url",
        "private_key",
    ] {
        assert!(
            text.contains(&format!("\n# {optional} = ")),
            "deploy/tengen.toml should show `# {optional} = ...`"
        );
    }
}

fn leaves(table: &toml::Table, prefix: &str) -> Vec<String> {
    let mut keys = Vec::new();
    for (key, value) in table {
        match value {
            toml::Value::Table(inner) => keys.extend(leaves(inner, &format!("{prefix}{key}."))),
            _ => keys.push(format!("{prefix}{key}")),
        }
    }
    keys.sort();
    keys
}

#[test]
fn the_printed_configuration_loads_back_and_hides_the_secret() {
    let dir = tempfile::tempdir().expect("dir");
    let vars = env(&[
        ("TENGEN_LIMITS__BURST", "60"),
        ("TENGEN_AUTH__ISSUER", "https://login.example.org"),
    ]);
    let config = Config::load(None, vars).expect("load");
    let printed = config.to_toml_redacted();
    assert!(printed.contains("# Not set: auth.secret"), "{printed}");
    let file = write(dir.path(), "printed.toml", &printed);
    assert_eq!(Config::load(Some(&file), env(&[])).expect("reload"), config);

    let mut secret = config.clone();
    secret.auth.secret = Some("hunter2-but-longer".into());
    let printed = secret.to_toml_redacted();
    assert!(printed.contains("secret = \"<redacted>\""), "{printed}");
    assert!(!printed.contains("hunter2"), "{printed}");
    // Pasting the printed file back must not make "<redacted>" the secret.
    let file = write(dir.path(), "secret.toml", &printed);
    refused(
        Config::load(Some(&file), env(&[])),
        &["auth.secret", "placeholder", &file.display().to_string()],
    );
}

/// Runs the real binary with only the given environment.
fn tengen(args: &[&str], vars: &[(&str, &str)], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(args)
        .env_clear()
        .envs(vars.iter().copied())
        .current_dir(cwd)
        .output()
        .expect("run tengen")
}

#[test]
fn tengen_config_print_shows_the_effective_configuration() {
    let dir = tempfile::tempdir().expect("dir");
    let file = write(
        dir.path(),
        "t.toml",
        "[limits]\nburst = 10\nheartbeat_secs = 15\n",
    );
    let out = tengen(
        &[
            "config",
            "--print",
            "--config",
            file.to_str().expect("utf-8"),
            "--data",
            "/srv/tengen",
            "--set",
            "limits.heartbeat_secs=25",
        ],
        &[
            ("TENGEN_LIMITS__BURST", "50"),
            (
                "TENGEN_AUTH__SECRET",
                "very-secret-value-0123456789-0123456789",
            ),
            ("TENGEN_LOG", "debug"),
        ],
        dir.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Config = toml::from_str(
        &stdout.replace("\"<redacted>\"", "\"x\""), // parse as data, not as a config to run
    )
    .expect("the output is a configuration");
    assert_eq!(printed.limits.burst, 50, "environment over file");
    assert_eq!(printed.limits.heartbeat_secs, 25, "flag over file");
    assert_eq!(printed.data_dir, PathBuf::from("/srv/tengen"), "--data");
    assert_eq!(printed.log.filter, "debug", "TENGEN_LOG");
    assert_eq!(printed.auth.algorithm, JwtAlgorithm::HS256);
    assert!(stdout.contains("secret = \"<redacted>\""), "{stdout}");
    assert!(!stdout.contains("very-secret"), "{stdout}");
}

#[test]
fn serve_refuses_to_start_on_a_bad_configuration() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().join("data");
    let data = data.to_str().expect("utf-8");
    let bad_file = write(dir.path(), "t.toml", "[limits]\nburts = 3\n");
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
    let cases: [Case; 6] = [
        (
            &[
                "serve",
                "--data",
                data,
                "--config",
                bad_file.to_str().expect("utf-8"),
            ],
            &[],
            "burts",
        ),
        (
            &["serve", "--data", data],
            &[("TENGEN_LIMITS__BURST", "x")],
            "TENGEN_LIMITS__BURST",
        ),
        (
            &["serve", "--data", data],
            &[("TENGEN_NOPE", "1")],
            "TENGEN_NOPE",
        ),
        (
            &["serve", "--data", data, "--set", "store.sync=off"],
            &[],
            "store.sync",
        ),
        // The dev login mints any identity: `--listen` on an address other machines
        // reach is checked against it like every other way of setting the address.
        (
            &["serve", "--data", data, "--listen", "0.0.0.0:0"],
            &[("TENGEN_AUTH__DEV_LOGIN", "true")],
            "listen (0.0.0.0:0)",
        ),
        (
            &[
                "serve",
                "--data",
                data,
                "--set",
                "auth.dev_login=true",
                "--listen",
                "0.0.0.0:0",
            ],
            &[],
            "auth.dev_login",
        ),
    ];
    for (args, vars, named) in cases {
        let out = tengen(args, vars, dir.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} {vars:?}: {stderr}");
        assert!(stderr.contains(named), "{args:?} {vars:?}: {stderr}");
        assert!(
            !Path::new(data).exists(),
            "nothing was created before the refusal"
        );
    }
    // A bad --listen is refused by the flag parser, naming the flag.
    let out = tengen(
        &["serve", "--data", data, "--listen", "nowhere"],
        &[],
        dir.path(),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--listen"));
}

#[test]
fn the_dev_login_is_on_by_default_only_on_loopback() {
    let load = |pairs: &[(&str, &str)]| Config::load(None, env(pairs));
    assert!(load(&[]).expect("load").dev_login());
    assert!(
        load(&[("TENGEN_LISTEN", "[::1]:7480")])
            .expect("load")
            .dev_login()
    );
    assert!(
        !load(&[("TENGEN_LISTEN", "0.0.0.0:7480")])
            .expect("load")
            .dev_login()
    );
    assert!(
        !load(&[("TENGEN_LISTEN", "192.0.2.7:7480")])
            .expect("load")
            .dev_login()
    );
    assert!(
        !load(&[("TENGEN_AUTH__DEV_LOGIN", "false")])
            .expect("load")
            .dev_login()
    );
    assert!(
        load(&[("TENGEN_AUTH__DEV_LOGIN", "true")])
            .expect("load")
            .dev_login()
    );
    refused(
        load(&[
            ("TENGEN_LISTEN", "0.0.0.0:7480"),
            ("TENGEN_AUTH__DEV_LOGIN", "true"),
        ]),
        &["auth.dev_login", "TENGEN_AUTH__DEV_LOGIN", "0.0.0.0:7480"],
    );
    // The printed configuration keeps "unset" unset, so it loads back the same.
    let printed = load(&[]).expect("load").to_toml_redacted();
    assert!(printed.contains("auth.dev_login"), "{printed}");
    let dir = tempfile::tempdir().expect("dir");
    let file = write(dir.path(), "printed.toml", &printed);
    assert_eq!(
        Config::load(Some(&file), env(&[]))
            .expect("reload")
            .auth
            .dev_login,
        None
    );
}

#[test]
fn tengen_token_refuses_to_sign_what_the_server_would_refuse() {
    let dir = tempfile::tempdir().expect("dir");
    let long = "x".repeat(41);
    for (args, claim) in [
        (
            vec!["token", "--sub", "ann", "--name", long.as_str()],
            "`name`",
        ),
        (vec!["token", "--sub", "a\u{1}b"], "`sub`"),
    ] {
        let out = tengen(&args, &[], dir.path());
        assert!(!out.status.success(), "{args:?} signed a token");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(claim), "{args:?}: {stderr}");
    }
    let out = tengen(
        &["token", "--sub", "ann", "--name", "Ann Lee"],
        &[],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The first token of a data directory makes its secret, and says where.
    assert!(stderr.contains("generated a new secret"), "{stderr}");
    let out = tengen(&["token", "--sub", "ann"], &[], dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{stderr}");
}

#[test]
fn account_settings_are_read_and_checked() {
    let config = Config::load(
        None,
        env(&[
            ("TENGEN_AUTH__REGISTRATION", "invite"),
            ("TENGEN_AUTH__PUBLIC_URL", "https://go.example"),
            (
                "TENGEN_AUTH__TRUSTED_PROXIES",
                "[\"10.0.0.1\", \"::1\", \"172.16.0.0/12\"]",
            ),
        ]),
    )
    .expect("load");
    assert_eq!(
        config.auth.registration,
        tengen::config::Registration::Invite
    );
    assert_eq!(config.auth.trusted_proxies.len(), 3);
    assert!(config.auth.trusted_proxies[2].contains("172.20.0.5".parse().unwrap()));
    refused(
        Config::load(
            None,
            env(&[("TENGEN_AUTH__TRUSTED_PROXIES", "[\"10.0.0.0/40\"]")]),
        ),
        &["TENGEN_AUTH__TRUSTED_PROXIES", "prefix length"],
    );
    assert_eq!(config.auth.access_ttl_secs, 900, "15 minutes by default");
    refused(
        Config::load(None, env(&[("TENGEN_AUTH__REGISTRATION", "sometimes")])),
        &["TENGEN_AUTH__REGISTRATION"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_AUTH__ACCESS_TTL_SECS", "5")])),
        &["auth.access_ttl_secs", "60"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_AUTH__REFRESH_TTL_DAYS", "0")])),
        &["auth.refresh_ttl_days"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_AUTH__REGISTRATIONS_PER_HOUR", "0")])),
        &["auth.registrations_per_hour", "closed"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_AUTH__PUBLIC_URL", "go.example")])),
        &["auth.public_url", "https://"],
    );
    refused(
        Config::load(
            None,
            env(&[("TENGEN_AUTH__TRUSTED_PROXIES", "[\"a proxy\"]")]),
        ),
        &["TENGEN_AUTH__TRUSTED_PROXIES"],
    );
}

#[test]
fn the_store_backend_is_chosen_and_its_url_never_shown_with_the_password() {
    use tengen::config::{StoreBackend, redact_url};
    let url = "postgres://tengen:hunter2-pg@db.example:5432/tengen";
    let config = Config::load_with_flags(
        None,
        env(&[("TENGEN_STORE__POSTGRES_URL", url)]),
        &[set("store.backend=postgres")],
    )
    .expect("postgres from the environment and a flag");
    assert_eq!(config.store.backend, StoreBackend::Postgres);
    assert_eq!(config.store.postgres_url.as_deref(), Some(url));
    let printed = config.to_toml_redacted();
    assert!(!printed.contains("hunter2"), "{printed}");
    assert!(
        printed.contains("postgres://tengen:<redacted>@db.example:5432/tengen"),
        "{printed}"
    );
    let dir = tempfile::tempdir().expect("dir");
    let file = write(dir.path(), "printed.toml", &printed);
    refused(
        Config::load(Some(&file), env(&[])),
        &["store.postgres_url", "placeholder"],
    );
    assert_eq!(
        redact_url("postgres://u:p@ss@h/db"),
        "postgres://u:<redacted>@h/db"
    );
    assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
    // A password, token or key elsewhere in the URL is hidden too.
    assert_eq!(
        redact_url("postgres://u@h:5432/db?sslmode=disable&password=hunter2"),
        "postgres://u@h:5432/db?sslmode=disable&password=<redacted>"
    );
    assert_eq!(
        redact_url("postgresql://h/db?sslpassword=x&user=u"),
        "postgresql://h/db?sslpassword=<redacted>&user=u"
    );
    assert_eq!(
        redact_url("nats://s3cr3t@h:4222"),
        "nats://<redacted>@h:4222"
    );
    assert_eq!(
        redact_url("nats://u:p@h:4222"),
        "nats://u:<redacted>@h:4222"
    );
    assert_eq!(
        redact_url("nats://h:4222?token=s3cr3t"),
        "nats://h:4222?token=<redacted>"
    );
    assert_eq!(redact_url("nats://h:4222"), "nats://h:4222");
    // Not a URL: not shown at all.
    assert_eq!(redact_url("host=h password=hunter2 user=u"), "<redacted>");
    let text = refused(
        Config::load(
            None,
            env(&[
                ("TENGEN_STORE__BACKEND", "postgres"),
                ("TENGEN_STORE__POSTGRES_URL", "host=h password=hunter2"),
            ]),
        ),
        &["store.postgres_url", "must start with postgres://"],
    );
    assert!(!text.contains("hunter2"), "{text}");

    refused(
        Config::load(None, env(&[("TENGEN_STORE__BACKEND", "postgres")])),
        &["store.postgres_url", "must be set"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_STORE__POSTGRES_URL", url)])),
        &["store.postgres_url", "sqlite"],
    );
    let text = refused(
        Config::load_with_flags(
            None,
            env(&[("TENGEN_STORE__POSTGRES_URL", "mysql://u:hunter2@h/db")]),
            &[set("store.backend=postgres")],
        ),
        &["store.postgres_url", "postgres://"],
    );
    assert!(!text.contains("hunter2"), "{text}");
    refused(
        Config::load(None, env(&[("TENGEN_STORE__BACKEND", "mysql")])),
        &["TENGEN_STORE__BACKEND"],
    );
}

#[test]
fn a_cluster_needs_the_shared_store_and_one_secret_and_hides_the_nats_password() {
    let nats = ("TENGEN_CLUSTER__NATS_URL", "nats://tengen:hunter3@bus:4222");
    refused(
        Config::load(None, env(&[nats])),
        &["cluster.nats_url", "store.backend = \"postgres\""],
    );
    let pg = ("TENGEN_STORE__POSTGRES_URL", "postgres://t:p@db/tengen");
    let backend = ("TENGEN_STORE__BACKEND", "postgres");
    refused(
        Config::load(None, env(&[nats, pg, backend])),
        &["cluster.nats_url", "auth.secret"],
    );
    let secret = (
        "TENGEN_AUTH__SECRET",
        "the same on every node, 32 bytes or more",
    );
    let config = Config::load(None, env(&[nats, pg, backend, secret])).expect("a cluster node");
    assert_eq!(config.cluster.lease_ms, 5000);
    let printed = config.to_toml_redacted();
    assert!(!printed.contains("hunter3"), "{printed}");
    refused(
        Config::load(None, env(&[("TENGEN_CLUSTER__LEASE_MS", "100")])),
        &["cluster.lease_ms"],
    );
    refused(
        Config::load(None, env(&[("TENGEN_CLUSTER__NODE_ID", "a.b")])),
        &["cluster.node_id"],
    );
}

#[test]
fn config_check_refuses_a_malformed_nats_url_without_showing_its_password() {
    let dir = tempfile::tempdir().expect("dir");
    let cluster = [
        ("TENGEN_STORE__BACKEND", "postgres"),
        ("TENGEN_STORE__POSTGRES_URL", "postgres://t:p@db/tengen"),
        (
            "TENGEN_AUTH__SECRET",
            "the same secret on every node, 32+ bytes",
        ),
    ];
    for url in [
        "http://tengen:hunter3@bus:4222",
        "nats://tengen:hunter3@bus:42x2",
        "nats://tengen:hunter3@bus:4222/subjects",
        "nats//tengen:hunter3@bus:4222",
        "nats://",
    ] {
        let vars = [&cluster[..], &[("TENGEN_CLUSTER__NATS_URL", url)]].concat();
        let check = tengen(&["config", "--check"], &vars, dir.path());
        let said = String::from_utf8_lossy(&check.stderr);
        assert_eq!(check.status.code(), Some(2), "{url}: {said}");
        assert!(said.contains("cluster.nats_url"), "{url}: {said}");
        assert!(!said.contains("hunter3"), "{url}: {said}");
    }
    for url in ["nats://tengen:hunter3@bus:4222", "bus:4222", "tls://bus"] {
        let vars = [&cluster[..], &[("TENGEN_CLUSTER__NATS_URL", url)]].concat();
        let check = tengen(&["config", "--check"], &vars, dir.path());
        let said = String::from_utf8_lossy(&check.stderr);
        assert!(check.status.success(), "{url}: {said}");
    }
}

/// How often `needle` occurs in `text`.
fn occurrences(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[test]
fn config_check_refuses_the_key_files_serve_refuses_with_the_same_message() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().join("data");
    let data = data.to_str().expect("utf-8");
    let missing = dir.path().join("missing.pem");
    let not_a_key = write(dir.path(), "notes.pem", "these are not the keys\n");
    let ed25519 = repo_file("tests/data/keys/ed25519-test-public.pem");
    type Case<'a> = (&'a str, &'a Path, &'a str);
    let cases: [Case; 3] = [
        ("RS256", &missing, "No such file or directory"),
        ("RS256", &not_a_key, "not an RSA public key"),
        // A real key, of the wrong kind for the algorithm.
        ("RS256", &ed25519, "not an RSA public key"),
    ];
    for (algorithm, key, why) in cases {
        let key = key.to_str().expect("utf-8");
        let settings = [
            "--data",
            data,
            "--set",
            &format!("auth.algorithm={algorithm}"),
            "--set",
            &format!("auth.public_key_file={key}"),
        ];
        let check = tengen(
            &[&["config", "--check"][..], &settings].concat(),
            &[],
            dir.path(),
        );
        let serve = tengen(
            &[&["serve", "--listen", "127.0.0.1:0"][..], &settings].concat(),
            &[],
            dir.path(),
        );
        let check_err = String::from_utf8_lossy(&check.stderr);
        let serve_err = String::from_utf8_lossy(&serve.stderr);
        assert_eq!(check.status.code(), Some(2), "check {key}: {check_err}");
        assert_eq!(serve.status.code(), Some(2), "serve {key}: {serve_err}");
        let said = check_err.lines().last().unwrap_or_default();
        assert!(
            serve_err.contains(said),
            "check: {said}\nserve: {serve_err}"
        );
        for needle in ["auth.public_key_file", key, why] {
            assert!(said.contains(needle), "`{needle}` missing from: {said}");
        }
        assert_eq!(occurrences(said, why), 1, "{said}");
        assert!(
            !Path::new(data).exists(),
            "serve refused {key} before it created anything"
        );
    }
    // The right kind of key passes the check.
    let ok = tengen(
        &[
            "config",
            "--check",
            "--set",
            "auth.algorithm=EdDSA",
            "--set",
            &format!("auth.public_key_file={}", ed25519.display()),
        ],
        &[],
        dir.path(),
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}

#[test]
fn an_operating_system_error_is_printed_once() {
    let dir = tempfile::tempdir().expect("dir");
    let out = tengen(
        &["config", "--check", "--config", "nope.toml"],
        &[],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("nope.toml"), "{stderr}");
    assert_eq!(
        occurrences(&stderr, "No such file or directory"),
        1,
        "{stderr}"
    );

    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let data = dir.path().join("data");
    let out = tengen(
        &[
            "serve",
            "--listen",
            &addr,
            "--data",
            data.to_str().expect("utf-8"),
        ],
        &[],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let said = stderr.lines().last().unwrap_or_default();
    assert!(
        said.contains(&format!("cannot listen on {addr}")),
        "{stderr}"
    );
    assert_eq!(occurrences(said, "Address already in use"), 1, "{stderr}");
}

#[cfg(unix)]
#[test]
fn a_data_directory_tengen_creates_is_its_owners_alone() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| {
        std::fs::metadata(path)
            .expect("the directory")
            .permissions()
            .mode()
            & 0o777
    };
    let root = tempfile::tempdir().expect("dir");
    let fresh = root.path().join("var").join("tengen");
    let data = |dir: &Path| dir.to_str().expect("a UTF-8 path").to_owned();
    let out = tengen(
        &["token", "--sub", "ann", "--data", &data(&fresh)],
        &[],
        root.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        mode(&fresh),
        0o700,
        "it holds the secret and the password hashes"
    );
    // One the operator made keeps the permissions they gave it.
    let given = root.path().join("given");
    std::fs::create_dir(&given).expect("dir");
    std::fs::set_permissions(&given, std::fs::Permissions::from_mode(0o750)).expect("chmod");
    let out = tengen(
        &["token", "--sub", "ann", "--data", &data(&given)],
        &[],
        root.path(),
    );
    assert!(out.status.success());
    assert_eq!(mode(&given), 0o750);
}
