//! A thin, safe view of libclang (through clang-sys, loaded at run time): a parsed translation
//! unit and its cursors, with the positions biren-cc needs as byte offsets into the main file.

use clang_sys::*;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_void};
use std::ptr;

/// libclang, loaded once. Fails with a sentence a user can act on.
pub fn load() -> Result<(), String> {
    if is_loaded() {
        return Ok(());
    }
    clang_sys::load().map_err(|e| {
        format!("cannot load libclang ({e}); install it (Debian: apt-get install libclang-dev) or set LIBCLANG_PATH")
    })
}

fn string(s: CXString) -> String {
    unsafe {
        let c = clang_getCString(s);
        let out = if c.is_null() {
            String::new()
        } else {
            CStr::from_ptr(c).to_string_lossy().into_owned()
        };
        clang_disposeString(s);
        out
    }
}

/// A parsed translation unit (and its index), disposed of on drop.
pub struct Unit {
    index: CXIndex,
    tu: CXTranslationUnit,
    /// The main file, as libclang knows it.
    main: CXFile,
}

/// An error-level diagnostic: where, and what.
pub struct Diagnostic {
    pub line: u32,
    pub file: String,
    pub text: String,
}

impl Unit {
    /// Parses `path` with the compiler arguments `args` (language, -I, -D, -std, ...).
    pub fn parse(path: &str, args: &[String]) -> Result<Unit, String> {
        let cpath = CString::new(path).map_err(|_| "a NUL in a file name".to_string())?;
        let cargs: Vec<CString> = args
            .iter()
            .map(|a| CString::new(a.as_str()).unwrap_or_default())
            .collect();
        let argv: Vec<*const c_char> = cargs.iter().map(|a| a.as_ptr()).collect();
        unsafe {
            let index = clang_createIndex(0, 0);
            let mut tu: CXTranslationUnit = ptr::null_mut();
            let rc = clang_parseTranslationUnit2(
                index,
                cpath.as_ptr(),
                argv.as_ptr(),
                argv.len() as i32,
                ptr::null_mut(),
                0,
                CXTranslationUnit_KeepGoing,
                &mut tu,
            );
            if rc != CXError_Success || tu.is_null() {
                clang_disposeIndex(index);
                return Err(format!("libclang could not parse {path} (error {rc})"));
            }
            let main = clang_getFile(tu, cpath.as_ptr());
            Ok(Unit { index, tu, main })
        }
    }

    /// The errors libclang found (a unit with errors is compiled as it is: the system compiler
    /// reports them in its own words).
    pub fn errors(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        unsafe {
            for i in 0..clang_getNumDiagnostics(self.tu) {
                let d = clang_getDiagnostic(self.tu, i);
                if clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error {
                    let loc = clang_getDiagnosticLocation(d);
                    let (mut file, mut line) = (ptr::null_mut(), 0u32);
                    clang_getSpellingLocation(
                        loc,
                        &mut file,
                        &mut line,
                        ptr::null_mut(),
                        ptr::null_mut(),
                    );
                    let file = if file.is_null() {
                        String::new()
                    } else {
                        string(clang_getFileName(file))
                    };
                    out.push(Diagnostic {
                        line,
                        file,
                        text: string(clang_getDiagnosticSpelling(d)),
                    });
                }
                clang_disposeDiagnostic(d);
            }
        }
        out
    }

    pub fn root(&self) -> Cursor {
        Cursor {
            c: unsafe { clang_getTranslationUnitCursor(self.tu) },
            main: self.main,
        }
    }
}

impl Drop for Unit {
    fn drop(&mut self) {
        unsafe {
            clang_disposeTranslationUnit(self.tu);
            clang_disposeIndex(self.index);
        }
    }
}

/// A cursor of the unit (valid while the unit is).
#[derive(Clone, Copy)]
pub struct Cursor {
    c: CXCursor,
    main: CXFile,
}

/// A position: in the main file (its byte offset) or elsewhere (a header, a macro's body).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pos {
    Main(usize),
    Elsewhere,
}

extern "C" fn collect(c: CXCursor, _parent: CXCursor, data: CXClientData) -> CXChildVisitResult {
    unsafe { (*(data as *mut Vec<CXCursor>)).push(c) };
    CXChildVisit_Continue
}

impl Cursor {
    pub fn kind(&self) -> CXCursorKind {
        unsafe { clang_getCursorKind(self.c) }
    }

    pub fn children(&self) -> Vec<Cursor> {
        let mut v: Vec<CXCursor> = Vec::new();
        unsafe {
            clang_visitChildren(self.c, collect, &mut v as *mut Vec<CXCursor> as *mut c_void)
        };
        v.into_iter()
            .map(|c| Cursor { c, main: self.main })
            .collect()
    }

    /// Every cursor below this one, depth first (this one excluded).
    pub fn descendants(&self) -> Vec<Cursor> {
        let mut out = Vec::new();
        let mut stack = self.children();
        stack.reverse();
        while let Some(c) = stack.pop() {
            out.push(c);
            let mut ch = c.children();
            ch.reverse();
            stack.extend(ch);
        }
        out
    }

    pub fn spelling(&self) -> String {
        string(unsafe { clang_getCursorSpelling(self.c) })
    }

    pub fn is_definition(&self) -> bool {
        unsafe { clang_isCursorDefinition(self.c) != 0 }
    }

    /// The declaration a reference names (a DeclRefExpr's variable, a call's function).
    pub fn referenced(&self) -> Option<Cursor> {
        let r = unsafe { clang_getCursorReferenced(self.c) };
        if unsafe { clang_Cursor_isNull(r) } != 0 {
            None
        } else {
            Some(Cursor {
                c: r,
                main: self.main,
            })
        }
    }

    /// The definition of the declaration (a function's body, where the unit has it).
    pub fn definition(&self) -> Option<Cursor> {
        let r = unsafe { clang_getCursorDefinition(self.c) };
        if unsafe { clang_Cursor_isNull(r) } != 0 {
            None
        } else {
            Some(Cursor {
                c: r,
                main: self.main,
            })
        }
    }

    pub fn same(&self, other: &Cursor) -> bool {
        unsafe { clang_equalCursors(self.c, other.c) != 0 }
    }

    pub fn hash(&self) -> u32 {
        unsafe { clang_hashCursor(self.c) }
    }

    pub fn ty(&self) -> Type {
        Type {
            t: unsafe { clang_getCursorType(self.c) },
        }
    }

    pub fn storage_extern(&self) -> bool {
        unsafe { clang_Cursor_getStorageClass(self.c) == CX_SC_Extern }
    }

    pub fn storage_static_or_extern(&self) -> bool {
        let sc = unsafe { clang_Cursor_getStorageClass(self.c) };
        sc == CX_SC_Static || sc == CX_SC_Extern
    }

    /// Where a location is, by expansion (a macro's use, not its definition).
    fn expansion(&self, loc: CXSourceLocation) -> Pos {
        let (mut file, mut off) = (ptr::null_mut(), 0u32);
        unsafe {
            clang_getExpansionLocation(loc, &mut file, ptr::null_mut(), ptr::null_mut(), &mut off);
            if !file.is_null() && clang_File_isEqual(file, self.main) != 0 {
                Pos::Main(off as usize)
            } else {
                Pos::Elsewhere
            }
        }
    }

    /// Where a location is spelled (inside a macro's definition for tokens that come from it).
    fn spelled(&self, loc: CXSourceLocation) -> Pos {
        let (mut file, mut off) = (ptr::null_mut(), 0u32);
        unsafe {
            clang_getSpellingLocation(loc, &mut file, ptr::null_mut(), ptr::null_mut(), &mut off);
            if !file.is_null() && clang_File_isEqual(file, self.main) != 0 {
                Pos::Main(off as usize)
            } else {
                Pos::Elsewhere
            }
        }
    }

    /// The start of the cursor's text, by expansion.
    pub fn start(&self) -> Pos {
        self.expansion(unsafe { clang_getRangeStart(clang_getCursorExtent(self.c)) })
    }

    /// The end of the cursor's text (one past), by expansion: reliable only for a cursor whose
    /// last token is written in the file (a `}`), not for one ending in a macro.
    pub fn end(&self) -> Pos {
        self.expansion(unsafe { clang_getRangeEnd(clang_getCursorExtent(self.c)) })
    }

    /// The cursor's own location (a declaration's name, a reference's identifier), by expansion.
    pub fn location(&self) -> Pos {
        self.expansion(unsafe { clang_getCursorLocation(self.c) })
    }

    /// The cursor's own location, where it is spelled: `Pos::Main` only for an identifier
    /// written in the file itself (not produced by a macro's body).
    pub fn spelled_location(&self) -> Pos {
        self.spelled(unsafe { clang_getCursorLocation(self.c) })
    }

    /// The line of the cursor's location, by expansion.
    pub fn line(&self) -> u32 {
        let mut line = 0u32;
        unsafe {
            clang_getExpansionLocation(
                clang_getCursorLocation(self.c),
                ptr::null_mut(),
                &mut line,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        line
    }

    /// Where a location is, by expansion or by spelling: its file's path and byte offset.
    fn file_pos(loc: CXSourceLocation, spelled: bool) -> Option<(String, usize)> {
        let (mut file, mut off) = (ptr::null_mut(), 0u32);
        unsafe {
            if spelled {
                clang_getSpellingLocation(
                    loc,
                    &mut file,
                    ptr::null_mut(),
                    ptr::null_mut(),
                    &mut off,
                );
            } else {
                clang_getExpansionLocation(
                    loc,
                    &mut file,
                    ptr::null_mut(),
                    ptr::null_mut(),
                    &mut off,
                );
            }
            if file.is_null() {
                None
            } else {
                Some((string(clang_getFileName(file)), off as usize))
            }
        }
    }

    /// The cursor's extent (start, end one past) in whichever file it is, by expansion.
    /// The cursor's own location (a declaration's name, a reference's identifier) in any
    /// file, by expansion: the file and the byte offset.
    pub fn location_in(&self) -> Option<(String, usize)> {
        Self::file_pos(unsafe { clang_getCursorLocation(self.c) }, false)
    }

    /// A function's result type.
    pub fn result_type(&self) -> Type {
        Type {
            t: unsafe { clang_getCursorResultType(self.c) },
        }
    }

    pub fn extent_in(&self) -> Option<(String, usize, usize)> {
        let r = unsafe { clang_getCursorExtent(self.c) };
        let (f, a) = Self::file_pos(unsafe { clang_getRangeStart(r) }, false)?;
        let (g, b) = Self::file_pos(unsafe { clang_getRangeEnd(r) }, false)?;
        (f == g).then_some((f, a, b))
    }

    /// The cursor's extent where it is spelled (a launch written as a macro's argument: the
    /// argument's own text).
    pub fn spelled_extent_in(&self) -> Option<(String, usize, usize)> {
        let r = unsafe { clang_getCursorExtent(self.c) };
        let (f, a) = Self::file_pos(unsafe { clang_getRangeStart(r) }, true)?;
        let (g, b) = Self::file_pos(unsafe { clang_getRangeEnd(r) }, true)?;
        (f == g).then_some((f, a, b))
    }

    /// The declaration's unified symbol name: one for a function's declarations and definition.
    pub fn usr(&self) -> String {
        string(unsafe { clang_getCursorUSR(self.c) })
    }

    /// True where the cursor is in a system header (-isystem, the compiler's own).
    pub fn in_system_header(&self) -> bool {
        unsafe { clang_Location_isInSystemHeader(clang_getCursorLocation(self.c)) != 0 }
    }

    /// The cursor's lexical parent (where it is written: a linkage specification, a namespace).
    pub fn lexical_parent(&self) -> Cursor {
        Cursor {
            c: unsafe { clang_getCursorLexicalParent(self.c) },
            main: self.main,
        }
    }

    /// True for a cursor written in the main file (or by a macro used there).
    pub fn in_main_file(&self) -> bool {
        matches!(self.location(), Pos::Main(_))
    }
}

/// A type of the unit.
#[derive(Clone, Copy)]
pub struct Type {
    t: CXType,
}

impl Type {
    pub fn spelling(&self) -> String {
        string(unsafe { clang_getTypeSpelling(self.t) })
    }
    pub fn kind(&self) -> CXTypeKind {
        self.t.kind
    }
    pub fn is_const(&self) -> bool {
        unsafe { clang_isConstQualifiedType(self.t) != 0 }
    }
    /// An array's element type (also of an array of unknown size).
    pub fn element(&self) -> Type {
        Type {
            t: unsafe { clang_getArrayElementType(self.t) },
        }
    }
    pub fn canonical(&self) -> Type {
        Type {
            t: unsafe { clang_getCanonicalType(self.t) },
        }
    }
    pub fn is_pod(&self) -> bool {
        unsafe { clang_isPODType(self.t) != 0 }
    }
}

/// Reads the template head of a function template: `template <...>` as written, and the
/// arguments that name its parameters (`<T, N>`, packs expanded).
#[allow(non_upper_case_globals)] // libclang's cursor kinds keep their C names.
pub fn template_of(src: &[u8], f: &Cursor) -> Option<(String, String)> {
    let (_, start, _) = f.extent_in()?;
    let t = src.get(start..)?;
    if !t.starts_with(b"template") {
        return None;
    }
    let mut i = start + 8;
    while i < src.len() && src[i].is_ascii_whitespace() {
        i += 1;
    }
    if src.get(i) != Some(&b'<') {
        return None;
    }
    let mut depth = 0i32;
    let mut paren = 0i32;
    let mut j = i;
    while j < src.len() {
        match src[j] {
            b'(' => paren += 1,
            b')' => paren -= 1,
            b'<' if paren == 0 => depth += 1,
            b'>' if paren == 0 => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        j += 1;
    }
    let head = String::from_utf8_lossy(&src[start..(j + 1).min(src.len())]).into_owned();
    let mut args = Vec::new();
    for ch in f.children() {
        match ch.kind() {
            CXCursor_TemplateTypeParameter
            | CXCursor_NonTypeTemplateParameter
            | CXCursor_TemplateTemplateParameter => {
                let name = ch.spelling();
                let pack = match ch.extent_in() {
                    Some((_, a, b)) => src
                        .get(a..b)
                        .is_some_and(|t| t.windows(3).any(|w| w == b"...")),
                    None => false,
                };
                args.push(if pack { format!("{name}...") } else { name });
            }
            _ => {}
        }
    }
    Some((head, format!("<{}>", args.join(", "))))
}
