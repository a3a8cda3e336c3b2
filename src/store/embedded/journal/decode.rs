//! Decoding a journal or archive frame's payload into a [`Rec`]: a read cursor over the bytes
//! (integers little-endian, byte strings with a `u32` length, optional strings with a presence
//! byte) and one match on the tag byte. Knows bytes only, like its parent module.

use super::{
    Finished, Rec, Span, T_APPEND, T_ARCHIVED, T_CREATE, T_CREATE_SCRIPTED, T_FINISH, T_GAME,
    T_GAME_SCRIPTED, T_SCRIPT,
};

/// A read cursor over a payload; every read fails cleanly past the end.
struct Cur<'a>(&'a [u8]);

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.0.len() < n {
            return Err("frame ends early".into());
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        let mut b = [0; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self) -> Result<u64, String> {
        let mut b = [0; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn str(&mut self) -> Result<&'a str, String> {
        std::str::from_utf8(self.bytes()?).map_err(|_| "string is not UTF-8".to_string())
    }
    fn opt(&mut self) -> Result<Option<&'a str>, String> {
        match self.u8()? {
            0 => Ok(None),
            1 => self.str().map(Some),
            t => Err(format!("bad option tag {t}")),
        }
    }

    /// The script hash of a frame whose tag says it has one (`scripted`); `None` for a frame
    /// written before the script table (its own tag, no such field).
    fn script_if(&mut self, scripted: bool) -> Result<Option<&'a str>, String> {
        if scripted { self.opt() } else { Ok(None) }
    }

    /// A finished game's head (fields read in the order written).
    fn finished(&mut self) -> Result<Finished<'a>, String> {
        Ok(Finished {
            id: self.str()?,
            platform: self.opt()?,
            request_id: self.opt()?,
            at: self.u64()?,
        })
    }
}

/// Decodes a frame's payload (checksum already checked).
pub fn decode(payload: &[u8]) -> Result<Rec<'_>, String> {
    let mut c = Cur(payload);
    let rec = match c.u8()? {
        tag @ (T_CREATE | T_CREATE_SCRIPTED) => Rec::Create {
            id: c.str()?,
            platform: c.opt()?,
            request_id: c.opt()?,
            body: c.bytes()?,
            script: c.script_if(tag == T_CREATE_SCRIPTED)?,
        },
        T_SCRIPT => Rec::Script {
            hash: c.str()?,
            text: c.str()?,
        },
        T_APPEND => Rec::Append {
            id: c.str()?,
            seq: c.u64()?,
            body: c.bytes()?,
        },
        T_FINISH => Rec::Finish {
            id: c.str()?,
            at: c.u64()?,
        },
        T_ARCHIVED => Rec::Archived {
            game: c.finished()?,
            entries: c.u64()?,
            span: Span {
                off: c.u64()?,
                len: c.u32()?,
            },
        },
        tag @ (T_GAME | T_GAME_SCRIPTED) => {
            let (game, record) = (c.finished()?, c.bytes()?);
            let script = c.script_if(tag == T_GAME_SCRIPTED)?;
            let n = c.u64()?;
            let mut entries = Vec::new();
            for _ in 0..n {
                entries.push(c.bytes()?);
            }
            Rec::Game {
                game,
                record,
                script,
                entries,
            }
        }
        t => return Err(format!("unknown frame tag {t}")),
    };
    if !c.0.is_empty() {
        return Err("trailing bytes in frame".into());
    }
    Ok(rec)
}
