//! Wire names read from the serde types themselves, so that no hand-kept list of message
//! types, event kinds or error codes can fall out of step with the enums.
//!
//! Two small tricks: deserializing a tag no variant has makes serde call
//! [`de::Error::unknown_variant`] with the enum's whole list of tags, which an error type
//! of our own keeps; and serializing a value hands the variant's wire name (a unit
//! variant's name, or the tag field an internally tagged enum writes first) to the
//! serializer, which one of our own captures before anything else is written.

use std::fmt;

use serde::de::{self, DeserializeOwned};
use serde::ser::{self, Impossible, Serialize};

/// A name no variant has: control characters never appear in a wire name.
const PROBE: &str = "\u{1}";

/// What a probe found: the variant list, or why there was none.
#[derive(Debug)]
struct Probe(Option<&'static [&'static str]>);

impl fmt::Display for Probe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a wire-name probe")
    }
}

impl std::error::Error for Probe {}

impl de::Error for Probe {
    fn custom<T: fmt::Display>(_: T) -> Probe {
        Probe(None)
    }

    fn unknown_variant(_: &str, expected: &'static [&'static str]) -> Probe {
        Probe(Some(expected))
    }
}

/// Every `tag` value of an internally tagged enum, in declaration order.
pub fn tags<T: DeserializeOwned>(tag: &'static str) -> &'static [&'static str] {
    let map = de::value::MapDeserializer::<_, Probe>::new(std::iter::once((tag, PROBE)));
    probed(T::deserialize(map).err())
}

fn probed(found: Option<Probe>) -> &'static [&'static str] {
    match found {
        Some(Probe(Some(names))) => names,
        // Only an enum without variants (or not an enum at all) gets here.
        _ => &[],
    }
}

/// The wire name `value` serializes under: the variant of a unit enum, or the `tag` field
/// of an internally tagged one (`tag` is unused for a unit enum). The tag's string is
/// looked up in the enum's own list, so the name is `'static` and nothing is allocated.
pub fn name_of<T: Serialize + DeserializeOwned>(value: &T, tag: &'static str) -> &'static str {
    let capture = Capture {
        tag,
        names: tags::<T>,
    };
    match value.serialize(capture) {
        Err(Captured(Some(name))) => name,
        // Only a type that is neither kind of enum gets here (the wire types' tests show
        // every one of theirs has a name).
        _ => "unnamed",
    }
}

/// Ends serialization as soon as the name is known (so nothing else is written).
#[derive(Debug)]
struct Captured(Option<&'static str>);

impl fmt::Display for Captured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a captured wire name")
    }
}

impl std::error::Error for Captured {}

impl ser::Error for Captured {
    fn custom<T: fmt::Display>(_: T) -> Captured {
        Captured(None)
    }
}

#[derive(Clone, Copy)]
struct Capture {
    tag: &'static str,
    /// The enum's tag values, read only once a tag is written.
    names: fn(&'static str) -> &'static [&'static str],
}

impl Capture {
    fn find(self, name: &str) -> Captured {
        Captured((self.names)(self.tag).iter().copied().find(|n| *n == name))
    }
}

/// Fails every shape but the few an enum's name travels in.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*) -> $out:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$out, Captured> { Err(Captured(None)) })*
    };
}

impl ser::Serializer for Capture {
    type Ok = ();
    type Error = Captured;
    type SerializeSeq = Impossible<(), Captured>;
    type SerializeTuple = Impossible<(), Captured>;
    type SerializeTupleStruct = Impossible<(), Captured>;
    type SerializeTupleVariant = Impossible<(), Captured>;
    type SerializeMap = Impossible<(), Captured>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), Captured>;

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
    ) -> Result<(), Captured> {
        Err(Captured(Some(v)))
    }

    fn serialize_str(self, v: &str) -> Result<(), Captured> {
        Err(self.find(v))
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Captured> {
        Ok(self)
    }

    refuse! {
        serialize_bool(bool) -> ();
        serialize_i8(i8) -> ();
        serialize_i16(i16) -> ();
        serialize_i32(i32) -> ();
        serialize_i64(i64) -> ();
        serialize_u8(u8) -> ();
        serialize_u16(u16) -> ();
        serialize_u32(u32) -> ();
        serialize_u64(u64) -> ();
        serialize_f32(f32) -> ();
        serialize_f64(f64) -> ();
        serialize_char(char) -> ();
        serialize_bytes(&[u8]) -> ();
        serialize_none() -> ();
        serialize_unit() -> ();
        serialize_unit_struct(&'static str) -> ();
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
        serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
        serialize_map(Option<usize>) -> Self::SerializeMap;
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_some<T: ?Sized + Serialize>(self, _: &T) -> Result<(), Captured> {
        Err(Captured(None))
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Captured> {
        Err(Captured(None))
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Captured> {
        Err(Captured(None))
    }
}

/// An internally tagged enum writes its tag as the first field.
impl ser::SerializeStruct for Capture {
    type Ok = ();
    type Error = Captured;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Captured> {
        if key == self.tag {
            value.serialize(*self)
        } else {
            Err(Captured(None))
        }
    }

    fn end(self) -> Result<(), Captured> {
        Err(Captured(None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ErrorCode, GameEvent, ServerMsg};
    use crate::rules::Color;

    #[test]
    fn variant_lists_come_from_the_types() {
        let messages = tags::<ServerMsg>("type");
        assert!(messages.contains(&"welcome") && messages.contains(&"snapshot"));
        assert_eq!(messages.first(), Some(&"welcome"));
        // Not an internally tagged enum: no list rather than a panic.
        assert!(tags::<ErrorCode>("type").is_empty());
        assert!(tags::<u32>("type").is_empty());
    }

    #[test]
    fn names_are_what_serde_writes() {
        for code in [
            ErrorCode::BadRequest,
            ErrorCode::NotYourTurn,
            ErrorCode::Unavailable,
        ] {
            let wire = serde_json::to_value(code).unwrap();
            assert_eq!(wire, code.as_str());
        }
        let events = [
            GameEvent::ScoreAccepted { by: Color::White },
            GameEvent::GameBegan { clock: None },
            GameEvent::PlayResumed {
                by: None,
                to_move: Color::Black,
                clock: None,
            },
        ];
        for event in events {
            let wire = serde_json::to_value(&event).unwrap();
            assert_eq!(wire["type"], event.kind());
        }
    }
}
