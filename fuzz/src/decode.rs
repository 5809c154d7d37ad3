//! `tengen::protocol::decode` on any text frame: it never panics, every refusal carries a
//! code a client can match on and a message, the request id is echoed whenever the frame
//! had a readable one, and whatever it accepts survives a write and a second read.

use tengen::protocol::{ErrorCode, decode, request_id};

pub fn check(data: &[u8]) {
    // WebSocket text frames are UTF-8; the server never hands decode anything else.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let quick_id = request_id(text);
    match decode(text) {
        Err(e) => {
            assert!(
                matches!(
                    e.refusal.code,
                    ErrorCode::BadRequest | ErrorCode::UnknownType
                ),
                "decode refused {text:?} with {:?}",
                e.refusal.code
            );
            assert!(!e.refusal.message.is_empty(), "no message for {text:?}");
            assert_eq!(
                e.refusal.reason, None,
                "a decode refusal is no illegal move"
            );
            if let (Some(quick), Some(echoed)) = (&quick_id, &e.id) {
                assert_eq!(quick, echoed, "two readings of the id of {text:?}");
            }
        }
        Ok(request) => {
            if let Some(quick) = &quick_id {
                assert_eq!(Some(quick), request.id.as_ref(), "id of {text:?}");
            }
            let written = serde_json::to_string(&request.msg).expect("a message serializes");
            let again = decode(&written)
                .unwrap_or_else(|e| panic!("{written} (from {text:?}) is refused: {e:?}"));
            assert_eq!(again.msg, request.msg, "{written} reads back differently");
        }
    }
}
