//! The wire names of a struct's fields, read from its `Deserialize`: a derived impl hands
//! the deserializer the whole list (renames applied) before it reads anything, and this
//! deserializer stops there, with the list as its error.

use std::collections::BTreeSet;

use serde::de::{self, DeserializeOwned, Error as _, Visitor, value::Error};

/// Starts the refusal that carries the list (a field name never holds a space).
const LISTED: &str = "fields:";

struct Probe;

impl<'de> de::Deserializer<'de> for Probe {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
        Err(Error::custom("not a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Error> {
        Err(Error::custom(format!("{LISTED} {}", fields.join(" "))))
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
    let refusal = T::deserialize(Probe).err().map(|e| e.to_string());
    match refusal.as_deref().and_then(|e| e.strip_prefix(LISTED)) {
        Some(fields) => fields.split_whitespace().map(str::to_string).collect(),
        None => panic!(
            "{} does not list its fields to serde",
            std::any::type_name::<T>()
        ),
    }
}
