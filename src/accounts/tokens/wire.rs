//! The JSON bodies of the personal-token routes (`/api/tokens`,
//! client-protocol/accounts.md#personal-api-tokens). Plain serde structs, kept apart from
//! the handlers so an API description can be generated from them. Refusals are
//! [`AuthProblem`](crate::accounts::wire::AuthProblem)s, as on every account route.

use serde::{Deserialize, Serialize};

use super::scope::Scope;

/// `POST /api/tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTokenRequest {
    /// What the token is for, shown in the list: 1 to 40 characters.
    pub name: String,
    /// At least one; each one the account's role may hold.
    #[schemars(length(min = 1))]
    pub scopes: Vec<Scope>,
    /// Days until the token expires, 1 to 365; absent: it never expires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = super::MAX_EXPIRY_DAYS))]
    pub expires_in_days: Option<u32>,
}

/// A token as the list shows it: never the secret, only the visible `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenView {
    /// The token's visible prefix (`tgn_` and 12 hex digits), which its secret starts
    /// with: what a revocation names.
    pub id: String,
    pub name: String,
    pub scopes: Vec<Scope>,
    /// Unix ms.
    pub created_at: i64,
    /// Unix ms; absent: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// Unix ms, to the minute; absent: never used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<i64>,
}

/// `201` to `POST /api/tokens`: the only answer that holds the secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatedToken {
    /// The whole token, shown this once; the server keeps only its SHA-256.
    pub token: String,
    #[serde(flatten)]
    pub view: TokenView,
}

/// `GET /api/tokens`: the caller's tokens, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenList {
    pub tokens: Vec<TokenView>,
    /// How many one account may hold (`auth.max_personal_tokens`).
    pub max: usize,
}
