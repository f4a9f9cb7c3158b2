//! Positions in C source text, for the spans the syntax tree gives: the tree says where a
//! statement starts; these find the tokens it does not name (a `for`'s parentheses, the `;`
//! that ends a declaration) by C's lexical rules: comments, string and character literals,
//! nesting of (), [] and {}.

/// Skips white space and comments from `i`.
pub fn skip_blank(s: &[u8], mut i: usize) -> usize {
    loop {
        while i < s.len() && (s[i] as char).is_ascii_whitespace() {
            i += 1;
        }
        if s[i..].starts_with(b"//") {
            while i < s.len() && s[i] != b'\n' {
                i += 1;
            }
        } else if s[i..].starts_with(b"/*") {
            i += 2;
            while i + 1 < s.len() && !(s[i] == b'*' && s[i + 1] == b'/') {
                i += 1;
            }
            i = (i + 2).min(s.len());
        } else {
            return i;
        }
    }
}

/// The end of a string or character literal that starts at `i` (one past its closing quote).
fn literal_end(s: &[u8], i: usize) -> usize {
    let q = s[i];
    let mut j = i + 1;
    while j < s.len() && s[j] != q {
        if s[j] == b'\\' {
            j += 1;
        }
        j += 1;
    }
    (j + 1).min(s.len())
}

/// Walks `s[from..to]` at nesting depth 0 (outside brackets, literals and comments), calling
/// `f(i)` at each such byte; stops when `f` returns true, returning that position.
pub fn scan_top(
    s: &[u8],
    from: usize,
    to: usize,
    mut f: impl FnMut(usize) -> bool,
) -> Option<usize> {
    let mut depth = 0i32;
    let mut i = from;
    while i < to {
        let c = s[i];
        if c == b'"' || c == b'\'' {
            i = literal_end(s, i);
            continue;
        }
        if s[i..].starts_with(b"//") || s[i..].starts_with(b"/*") {
            i = skip_blank(s, i);
            continue;
        }
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            _ => {
                if depth == 0 && f(i) {
                    return Some(i);
                }
            }
        }
        if depth < 0 {
            return None;
        }
        i += 1;
    }
    None
}

/// The `)` that closes the `(` at `open`.
pub fn matching(s: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut i = open;
    while i < s.len() {
        let c = s[i];
        if c == b'"' || c == b'\'' {
            i = literal_end(s, i);
            continue;
        }
        if s[i..].starts_with(b"//") || s[i..].starts_with(b"/*") {
            i = skip_blank(s, i);
            continue;
        }
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The positions of the top-level bytes `sep` in `s[from..to]`.
pub fn split_top(s: &[u8], from: usize, to: usize, sep: u8) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = from;
    while let Some(p) = scan_top(s, at, to, |i| s[i] == sep) {
        out.push(p);
        at = p + 1;
    }
    out
}

/// 1-based line and column of byte `off`.
pub fn line_col(s: &[u8], off: usize) -> (usize, usize) {
    let before = &s[..off.min(s.len())];
    let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
    let col = off
        - before
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1)
        + 1;
    (line, col)
}

/// The identifier that starts at `i`, if one does.
pub fn ident_at(s: &[u8], i: usize) -> &str {
    let mut j = i;
    while j < s.len() && (s[j].is_ascii_alphanumeric() || s[j] == b'_') {
        j += 1;
    }
    std::str::from_utf8(&s[i..j]).unwrap_or("")
}

/// What surrounds a use of a variable at `i..i+len`: does it write the variable (an
/// assignment, `++`/`--`), take its address (`&`), or index/select into it?
pub struct UseContext {
    pub writes: bool,
    pub address: bool,
    pub subscript: bool,
}

pub fn use_context(s: &[u8], i: usize, len: usize) -> UseContext {
    let after = skip_blank(s, i + len);
    let rest = &s[after.min(s.len())..];
    let assign_ops: [&[u8]; 10] = [
        b"+=", b"-=", b"*=", b"/=", b"%=", b"&=", b"|=", b"^=", b"<<=", b">>=",
    ];
    let writes_after = (rest.starts_with(b"=") && !rest.starts_with(b"=="))
        || rest.starts_with(b"++")
        || rest.starts_with(b"--")
        || assign_ops.iter().any(|op| rest.starts_with(op));
    let subscript = rest.starts_with(b"[") || rest.starts_with(b".") || rest.starts_with(b"->");
    // The token before: walk back over blanks (comments before a use are rare enough to ignore).
    let mut j = i;
    while j > 0 && (s[j - 1] as char).is_ascii_whitespace() {
        j -= 1;
    }
    let prev2 = if j >= 2 { &s[j - 2..j] } else { &s[..j] };
    let prev1 = if j >= 1 { s[j - 1] } else { 0 };
    let writes_before = prev2 == b"++" || prev2 == b"--";
    // A unary '&' (not 'a & b', not '&&'): what stands before it is no operand.
    let address = prev1 == b'&' && prev2 != b"&&" && {
        let mut k = j - 1;
        while k > 0 && (s[k - 1] as char).is_ascii_whitespace() {
            k -= 1;
        }
        !(k > 0 && (s[k - 1].is_ascii_alphanumeric() || matches!(s[k - 1], b'_' | b')' | b']')))
    };
    UseContext {
        writes: writes_after || writes_before,
        address,
        subscript,
    }
}

/// The file and line a user reads for byte `off` of `s`: as `#line` directives in `s` say
/// (biren-cc's own translations carry them), else `path` and the line in `s`.
pub fn user_line(s: &[u8], off: usize, path: &str) -> (String, usize) {
    let mut file = path.to_string();
    let mut line = 1usize;
    let mut i = 0usize;
    let end = off.min(s.len());
    while i < end {
        let next = s[i..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(s.len(), |p| i + p);
        let l = &s[i..next.min(s.len())];
        let t = String::from_utf8_lossy(l);
        let t = t.trim_start();
        if let Some(rest) = t.strip_prefix("#line ") {
            let mut parts = rest.splitn(2, ' ');
            if let Some(n) = parts.next().and_then(|n| n.trim().parse::<usize>().ok()) {
                if next >= end {
                    break;
                }
                line = n;
                if let Some(f) = parts.next() {
                    let f = f.trim();
                    if f.len() >= 2 && f.starts_with('"') && f.ends_with('"') {
                        file = f[1..f.len() - 1].replace("\\\\", "\\");
                    }
                }
                i = next + 1;
                continue;
            }
        }
        if next >= end {
            break;
        }
        line += 1;
        i = next + 1;
    }
    (file, line)
}
