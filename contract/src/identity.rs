//! The identity rule: an identity names the MCP server (`serverInfo.name`), the generated
//! package and the `<identity>-mcp` binary, so it must be a valid Cargo package name.
//!
//! Fisk AI accepts `^[a-zA-Z0-9_-]+$`; fiskgen also needs the first character to be a letter,
//! because Cargo refuses package names that start with a digit, `-` or `_`. The config reader
//! reports a violation with the line and column of the value, and the generator checks again
//! with the same function.

/// Why an identity cannot name a server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// Nothing at all.
    #[error("identity is empty: it names the MCP server and the <identity>-mcp binary")]
    Empty,
    /// The first character is not an ASCII letter.
    #[error(
        "identity {identity:?} is invalid: it must start with a letter (a-z, A-Z), because it \
         names the {identity}-mcp package and binary and Cargo package names cannot start with \
         {first:?}"
    )]
    Start {
        /// The identity.
        identity: String,
        /// Its first character.
        first: char,
    },
    /// A character other than an ASCII letter, digit, `-` or `_`.
    #[error(
        "identity {identity:?} is invalid: it must contain only letters, digits, '-' or '_' (it \
         names the MCP server and the {identity}-mcp binary)"
    )]
    Character {
        /// The identity.
        identity: String,
        /// The first character that is not allowed.
        bad: char,
    },
}

/// Checks that `identity` can name a server: `^[A-Za-z][A-Za-z0-9_-]*$`.
pub fn check(identity: &str) -> Result<(), IdentityError> {
    let Some(first) = identity.chars().next() else {
        return Err(IdentityError::Empty);
    };
    if let Some(bad) = identity
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
    {
        return Err(IdentityError::Character {
            identity: identity.to_string(),
            bad,
        });
    }
    if !first.is_ascii_alphabetic() {
        return Err(IdentityError::Start {
            identity: identity.to_string(),
            first,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_must_name_a_package_and_a_binary() {
        for good in ["nats", "my_app-2", "A", "tasks"] {
            assert_eq!(check(good), Ok(()), "{good}");
        }
        assert_eq!(check(""), Err(IdentityError::Empty));
        for (bad, first) in [("1app", '1'), ("-x", '-'), ("_x", '_')] {
            assert_eq!(
                check(bad),
                Err(IdentityError::Start {
                    identity: bad.into(),
                    first
                }),
                "{bad}"
            );
        }
        for (bad, char) in [("my app", ' '), ("a/b", '/'), ("ü", 'ü'), ("1 b", ' ')] {
            assert_eq!(
                check(bad),
                Err(IdentityError::Character {
                    identity: bad.into(),
                    bad: char
                }),
                "{bad}"
            );
        }
        let message = check("1app").expect_err("refused").to_string();
        assert!(message.contains("must start with a letter"), "{message}");
    }
}
