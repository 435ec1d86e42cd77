//! Pairwise seeds for the real multi-party CAPE protocol, with no server.
//!
//! Each party makes an X25519 key pair ([`keygen`]); the public half is shared as a small
//! JSON file (or pasted text). Two parties i < j compute the same 32-byte shared secret by
//! Diffie–Hellman, and from it the pair key
//! `HKDF-SHA256(salt = "privmix/cape/v1", ikm = DH(i, j), info = context ‖ i ‖ j ‖ pk_i ‖ pk_j)`,
//! where `context` is the SHA-256 digest of every agreed parameter of the run (so a different
//! run, or a different session label, gives unrelated streams). Each noise coordinate then gets
//! its own ChaCha20 stream keyed by `HKDF-Expand(pair key, "coord" ‖ coordinate name)`, so
//! parties whose categorical levels differ still cancel on the coordinates they share.
//!
//! A low-order (non-contributory) peer key is rejected. Keys should be fresh per release:
//! reusing a key with identical parameters repeats e_s, which the CLI refuses (the private key
//! file records the contexts it was used for).

use crate::error::{Error, Result};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use hkdf::Hkdf;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use x25519_dalek::{PublicKey, StaticSecret};

/// Format tag of a public key file.
pub const PUBLIC_FORMAT: &str = "privmix-federated-public-key-v1";
/// Format tag of a private key file.
pub const SECRET_FORMAT: &str = "privmix-federated-secret-key-v1";

/// A party's public key file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicKeyFile {
    /// Format tag.
    pub format: String,
    /// Party id (distinct within a federation).
    pub party: u32,
    /// X25519 public key, base64.
    pub x25519: String,
}

/// A party's private key file (keep it private).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretKeyFile {
    /// Format tag.
    pub format: String,
    /// Party id.
    pub party: u32,
    /// X25519 secret scalar, base64.
    pub x25519_secret: String,
    /// The matching public key, base64.
    pub x25519: String,
    /// Context digests this key has contributed to (a key must not be reused for the same
    /// context: its correlated noise would repeat).
    #[serde(default)]
    pub used_contexts: Vec<String>,
    /// True when the key was made from a fixed seed (tests only): anyone who knows the seed
    /// knows the key, so everything derived from it is "seeded, not for release".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub seeded: bool,
}

/// Makes a key pair for `party`: (private JSON, public JSON).
pub fn keygen<R: RngCore + ?Sized>(party: u32, rng: &mut R) -> (SecretKeyFile, PublicKeyFile) {
    let mut bytes = [0u8; 32];
    rng.fill_bytes(&mut bytes);
    let secret = StaticSecret::from(bytes);
    let public = PublicKey::from(&secret);
    let pk = B64.encode(public.as_bytes());
    (
        SecretKeyFile {
            format: SECRET_FORMAT.into(),
            party,
            x25519_secret: B64.encode(secret.to_bytes()),
            x25519: pk.clone(),
            used_contexts: Vec::new(),
            seeded: false,
        },
        PublicKeyFile {
            format: PUBLIC_FORMAT.into(),
            party,
            x25519: pk,
        },
    )
}

fn key32(what: &str, b64: &str) -> Result<[u8; 32]> {
    let v = B64.decode(b64.trim()).map_err(|e| {
        Error::Data(format!(
            "{what}: not valid base64 ({e}); use the key file privmix's keygen wrote"
        ))
    })?;
    v.try_into().map_err(|_| {
        Error::Data(format!(
            "{what}: an X25519 key has 32 bytes; use the key file privmix's keygen wrote"
        ))
    })
}

impl PublicKeyFile {
    /// Parses and checks a public key file.
    pub fn from_json(text: &str) -> Result<Self> {
        let k: PublicKeyFile = serde_json::from_str(text).map_err(|e| {
            Error::Data(format!("not a privmix public key file ({e}); use the public key files (the .pub ones) that the other parties' keygen wrote"))
        })?;
        if k.format != PUBLIC_FORMAT {
            return Err(Error::Data(format!(
                "public key format '{}' is not '{PUBLIC_FORMAT}'",
                k.format
            )));
        }
        key32(&format!("public key of party {}", k.party), &k.x25519)?;
        Ok(k)
    }
}

impl SecretKeyFile {
    /// Parses and checks a private key file (the public half must match the secret).
    pub fn from_json(text: &str) -> Result<Self> {
        let k: SecretKeyFile = serde_json::from_str(text).map_err(|e| {
            Error::Data(format!("not a privmix private key file ({e}); use the private key file your keygen wrote (not the public .pub one)"))
        })?;
        if k.format != SECRET_FORMAT {
            return Err(Error::Data(format!(
                "private key format '{}' is not '{SECRET_FORMAT}'",
                k.format
            )));
        }
        let s = StaticSecret::from(key32("private key", &k.x25519_secret)?);
        if B64.encode(PublicKey::from(&s).as_bytes()) != k.x25519.trim() {
            return Err(Error::Data(
                "the private key file is damaged: its public half does not match the secret".into(),
            ));
        }
        Ok(k)
    }

    /// The public key file of this secret.
    pub fn public(&self) -> PublicKeyFile {
        PublicKeyFile {
            format: PUBLIC_FORMAT.into(),
            party: self.party,
            x25519: self.x25519.clone(),
        }
    }

    /// The 32-byte pair key shared with `peer`, bound to `context`.
    pub fn pair_key(&self, peer: &PublicKeyFile, context: &[u8]) -> Result<[u8; 32]> {
        if peer.party == self.party {
            return Err(Error::param(
                "peers",
                peer.party,
                "a peer has this party's own id; every party needs a distinct id (party)",
            ));
        }
        let s = StaticSecret::from(key32("private key", &self.x25519_secret)?);
        let p = PublicKey::from(key32(
            &format!("public key of party {}", peer.party),
            &peer.x25519,
        )?);
        let shared = s.diffie_hellman(&p);
        if !shared.was_contributory() {
            return Err(Error::Data(format!(
                "the public key of party {} is a low-order point (not a real key); ask that party for the public key file its keygen wrote",
                peer.party
            )));
        }
        let (lo, hi) = if self.party < peer.party {
            (
                (self.party, self.x25519.trim()),
                (peer.party, peer.x25519.trim()),
            )
        } else {
            (
                (peer.party, peer.x25519.trim()),
                (self.party, self.x25519.trim()),
            )
        };
        let mut info = Vec::with_capacity(context.len() + 100);
        info.extend_from_slice(context);
        info.extend_from_slice(&lo.0.to_le_bytes());
        info.extend_from_slice(&hi.0.to_le_bytes());
        info.extend_from_slice(lo.1.as_bytes());
        info.extend_from_slice(hi.1.as_bytes());
        let hk = Hkdf::<Sha256>::new(Some(b"privmix/cape/v1"), shared.as_bytes());
        let mut out = [0u8; 32];
        hk.expand(&info, &mut out)
            .map_err(|_| Error::Data("internal: HKDF expand failed".into()))?;
        Ok(out)
    }
}

/// Stream name of a numeric column's coordinate: `n:<byte length of the name>:<name>`. The
/// length prefix makes names unambiguous whatever characters column names and levels hold.
pub fn numeric_coordinate(column: &str) -> String {
    format!("n:{}:{column}", column.len())
}

/// Stream name of a categorical column's level: `c:<byte length of the column>:<column>=<level>`
/// (unambiguous: the prefix says where the column ends, so `a=b`/`c` and `a`/`b=c` differ).
pub fn level_coordinate(column: &str, level: &str) -> String {
    format!("c:{}:{column}={level}", column.len())
}

/// The stream of one noise coordinate for a pair.
pub fn coordinate_stream(pair_key: &[u8; 32], coordinate: &str) -> Result<ChaCha20Rng> {
    let hk = Hkdf::<Sha256>::from_prk(pair_key)
        .map_err(|_| Error::Data("internal: bad pair key length".into()))?;
    let mut info = b"coord\0".to_vec();
    info.extend_from_slice(coordinate.as_bytes());
    let mut seed = [0u8; 32];
    hk.expand(&info, &mut seed)
        .map_err(|_| Error::Data("internal: HKDF expand failed".into()))?;
    Ok(ChaCha20Rng::from_seed(seed))
}

#[cfg(test)]
mod tests {

    #[test]
    fn coordinate_names_are_unambiguous() {
        // Column "a=b" with level "c" and column "a" with level "b=c" used to share the stream
        // "c:a=b=c"; a numeric column named like a level coordinate must not collide either.
        assert_ne!(level_coordinate("a=b", "c"), level_coordinate("a", "b=c"));
        assert_ne!(level_coordinate("a", "b"), numeric_coordinate("a=b"));
        assert_ne!(numeric_coordinate("c:a=b"), level_coordinate("a", "b"));
        assert_ne!(level_coordinate("é", "x"), level_coordinate("e", "x"));
        // Decoding: the prefix gives back (column, level) exactly.
        let name = level_coordinate("x=1:2", "=y");
        let rest = name.strip_prefix("c:").unwrap();
        let (len, tail) = rest.split_once(':').unwrap();
        let len: usize = len.parse().unwrap();
        assert_eq!(&tail[..len], "x=1:2");
        assert_eq!(&tail[len..], "==y");
        // Different names give unrelated streams.
        let k = [7u8; 32];
        let mut a = coordinate_stream(&k, &level_coordinate("a=b", "c")).unwrap();
        let mut b = coordinate_stream(&k, &level_coordinate("a", "b=c")).unwrap();
        assert_ne!(a.next_u64(), b.next_u64());
    }

    use super::*;
    use crate::rng::ReleaseRng;

    #[test]
    fn both_ends_derive_the_same_pair_key_bound_to_context() {
        let mut rng = ReleaseRng::seeded(1);
        let (s1, p1) = keygen(1, &mut rng);
        let (s2, p2) = keygen(2, &mut rng);
        let (s3, p3) = keygen(3, &mut rng);
        let k12 = s1.pair_key(&p2, b"ctx").unwrap();
        assert_eq!(k12, s2.pair_key(&p1, b"ctx").unwrap());
        assert_ne!(k12, s1.pair_key(&p2, b"other").unwrap());
        assert_ne!(k12, s1.pair_key(&p3, b"ctx").unwrap());
        assert_eq!(
            s3.pair_key(&p1, b"ctx").unwrap(),
            s1.pair_key(&p3, b"ctx").unwrap()
        );
        // Round trip through JSON.
        let j = serde_json::to_string(&s1).unwrap();
        assert_eq!(SecretKeyFile::from_json(&j).unwrap(), s1);
        assert_eq!(
            PublicKeyFile::from_json(&serde_json::to_string(&p1).unwrap()).unwrap(),
            p1
        );
        // Coordinate streams differ per coordinate and agree across ends.
        use rand::RngCore;
        let a = coordinate_stream(&k12, "n:x").unwrap().next_u64();
        assert_eq!(
            a,
            coordinate_stream(&s2.pair_key(&p1, b"ctx").unwrap(), "n:x")
                .unwrap()
                .next_u64()
        );
        assert_ne!(a, coordinate_stream(&k12, "n:y").unwrap().next_u64());
    }

    #[test]
    fn bad_keys_are_rejected() {
        let mut rng = ReleaseRng::seeded(2);
        let (s1, p1) = keygen(1, &mut rng);
        assert!(s1
            .pair_key(&p1, b"c")
            .unwrap_err()
            .to_string()
            .contains("distinct id (party)"));
        let zero = PublicKeyFile {
            x25519: B64.encode([0u8; 32]),
            party: 9,
            ..p1.clone()
        };
        assert!(s1
            .pair_key(&zero, b"c")
            .unwrap_err()
            .to_string()
            .contains("low-order"));
        let short = PublicKeyFile {
            x25519: B64.encode([1u8; 5]),
            ..p1.clone()
        };
        assert!(PublicKeyFile::from_json(&serde_json::to_string(&short).unwrap()).is_err());
        let mut bad = s1.clone();
        bad.x25519 = p1.x25519.replace('A', "B");
        if bad.x25519 != s1.x25519 {
            assert!(SecretKeyFile::from_json(&serde_json::to_string(&bad).unwrap()).is_err());
        }
        assert!(SecretKeyFile::from_json(&serde_json::to_string(&p1).unwrap()).is_err());
    }
}
