//! The wire names of a struct's fields, read from its `Deserialize`: a derived impl hands
//! the deserializer the whole list (renames applied) before it reads anything, and this
//! deserializer keeps the list and stops there.

use std::collections::BTreeSet;
use std::fmt;

use serde::de::{self, DeserializeOwned, Visitor};

#[derive(Debug)]
struct Fields(Option<&'static [&'static str]>);

impl fmt::Display for Fields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field-name probe")
    }
}

impl std::error::Error for Fields {}

impl de::Error for Fields {
    fn custom<T: fmt::Display>(_: T) -> Fields {
        Fields(None)
    }
}

struct Probe;

impl<'de> de::Deserializer<'de> for Probe {
    type Error = Fields;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Fields> {
        Err(Fields(None))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Fields> {
        Err(Fields(Some(fields)))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
        identifier ignored_any
    }
}

/// Every field `T` reads, by its wire name. Panics for a type that is not a plain struct
/// (a flattened field makes serde read a map, without a list).
pub fn field_names<T: DeserializeOwned>() -> BTreeSet<String> {
    match T::deserialize(Probe) {
        Err(Fields(Some(fields))) => fields.iter().map(|f| f.to_string()).collect(),
        _ => panic!(
            "{} does not list its fields to serde",
            std::any::type_name::<T>()
        ),
    }
}
