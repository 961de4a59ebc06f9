//! [`KeyProblem`]: what is wrong with a key attribute value (in
//! [`Error::InvalidKey`](super::Error::InvalidKey)).

/// What is wrong with a key attribute value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyProblem {
    /// The encoded key is the empty string, which DynamoDB rejects.
    #[error("the key is empty")]
    Empty,
    /// The encoded key is longer than DynamoDB allows.
    #[error("the key is {len} bytes long; the limit is {max} bytes")]
    TooLong {
        /// Its length in UTF-8 bytes.
        len: usize,
        /// The limit in UTF-8 bytes.
        max: usize,
    },
    /// A placeholder's value holds the character that ends it in the template: a verbatim
    /// placeholder (`<path:verbatim>#..` and a path with `#`), or an escaped one followed
    /// directly by a character its type declares it never writes
    /// ([`KeyPart::KEY_CHARS`](crate::KeyPart::KEY_CHARS)) and a value that writes it anyway.
    /// The key would read back as other values, so it is refused instead of written.
    #[error(
        "the value of placeholder `<{placeholder}>` contains `{separator}`, which ends it in the template: the key would read back as other values"
    )]
    Ambiguous {
        /// The placeholder.
        placeholder: String,
        /// The character.
        separator: char,
    },
    /// A value of an attribute of a multi-attribute index key has another DynamoDB type than
    /// the index declares (a field of another entity stored under the same name).
    #[error("the index key attribute is declared of type {expected}, the value is not")]
    WrongType {
        /// The type the index declares (`S`, `N` or `B`).
        expected: &'static str,
    },
}
