//! biren-cc: a compiler driver for BIREN programs (SPEC §12). Used like `cc`/`c++`; every
//! `BIREN_KERNEL` with barriers in a C or C++ source is compiled in region form (loops over the
//! block's threads between barriers) where it may be, else it keeps the fiber form; then the
//! system compiler (`CC`, `CXX`) compiles the result, with the BIREN include directory and, when
//! linking, the library and an rpath to it.

mod clang;
mod cuda;
mod emit;
mod inline;
mod kernel;
mod text;

use std::path::{Path, PathBuf};
use std::process::{exit, Command};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lang {
    C,
    Cxx,
    /// CUDA C++ (`.cu`): translated to C++ first (cuda.rs).
    Cuda,
}

fn lang_of(path: &str) -> Option<Lang> {
    let ext = Path::new(path).extension()?.to_str()?;
    match ext {
        "c" => Some(Lang::C),
        "cpp" | "cc" | "cxx" | "C" | "c++" => Some(Lang::Cxx),
        "cu" => Some(Lang::Cuda),
        _ => None,
    }
}

/// What the command line asks for.
#[derive(Default)]
struct Args {
    /// Flags for the system compiler, in order, with sources replaced as they are translated.
    items: Vec<Item>,
    compile_only: bool,
    /// -E, -M, -MM: no translation (the preprocessor's view of the user's text).
    preprocess_only: bool,
    keep: bool,
    report: bool,
    /// Every kernel in fiber form (no region stage): the same program to compare against.
    fibers: bool,
    verbose: bool,
    /// `-x c` / `-x c++` given: the language of the sources that follow.
    forced: Option<Lang>,
    /// Flags that also matter to the parser: -I, -D, -U, -std, -include, -isystem, ...
    parse_flags: Vec<String>,
    any_cxx: bool,
    any_cuda: bool,
    any_input: bool,
    /// nvcc's options that mean nothing here, said once with -v.
    ignored: Vec<String>,
}

enum Item {
    Flag(String),
    Source(String, Lang),
}

const USAGE: &str = "usage: biren-cc [compiler flags] files... [-o out]   (biren-cc --help)";

const HELP: &str = "biren-cc: compiles BIREN programs with the system compiler (CC, CXX), kernels with barriers in region form.
  biren-cc [flags] files... [-o out]
Flags go to the compiler as they are (-c -o -I -D -U -O -g -std= -march= -l -L -W...). biren-cc adds
the BIREN include directory and, when linking, -lbiren_runtime with an rpath.
  --kernel-report      one line per kernel on stderr: loops (N regions) or fibers (REASON at FILE:LINE)
  --fibers             every kernel in fiber form (to compare a program's region form with)
  -save-temps, --keep  keep the translated sources (next to the output, NAME.biren.c)
  -v                   print the commands run
Environment: CC, CXX (the compilers), BIREN_CC_INCLUDE, BIREN_CC_LIBDIR (where BIREN is),
LIBCLANG_PATH (where libclang is).";

/// nvcc's command line where it is harmless (a Makefile with NVCC=biren-cc): options about
/// the accelerator's code (-arch, -gencode, -lineinfo, -rdc, --use_fast_math, ...) are dropped
/// (said with -v), -Xcompiler/--compiler-options pass their list to the compiler, --std is
/// -std, -dc is -c, `-x cu` names CUDA sources.
fn normalize_nvcc(argv: &[String]) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut ignored = Vec::new();
    let mut i = 0;
    // Options whose value is the next argument when not joined by `=`.
    let drop_with_value = [
        "-arch",
        "--gpu-architecture",
        "-gencode",
        "--generate-code",
        "-code",
        "--gpu-code",
        "-ccbin",
        "--compiler-bindir",
        "-maxrregcount",
        "--maxrregcount",
        "-Xptxas",
        "--ptxas-options",
        "-Xnvlink",
        "--nvlink-options",
        "-t",
        "--threads",
        "-rdc",
        "--relocatable-device-code",
        "-Xcudafe",
        "-cudart",
        "--cudart",
    ];
    let drop_flags = [
        "-lineinfo",
        "--generate-line-info",
        "--use_fast_math",
        "-use_fast_math",
        "-G",
        "--device-debug",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
        "--extended-lambda",
        "-Wno-deprecated-gpu-targets",
        "-Wno-deprecated-declarations",
        "--keep-device-functions",
        "-src-in-ptx",
        "--resource-usage",
        "-res-usage",
        "--ftz=true",
        "--ftz=false",
        "--prec-div=true",
        "--prec-div=false",
        "--prec-sqrt=true",
        "--prec-sqrt=false",
        "--fmad=true",
        "--fmad=false",
        "-dlink",
        "--device-link",
    ];
    while i < argv.len() {
        let a = &argv[i];
        let (key, joined) = match a.split_once('=') {
            Some((k, _)) if k.starts_with('-') => (k, true),
            _ => (a.as_str(), false),
        };
        if drop_with_value.contains(&key) {
            if !joined && i + 1 < argv.len() {
                ignored.push(format!("{a} {}", argv[i + 1]));
                i += 2;
            } else {
                ignored.push(a.clone());
                i += 1;
            }
            continue;
        }
        if drop_flags.contains(&a.as_str())
            || a.starts_with("-arch=sm_")
            || a.starts_with("-arch=compute_")
        {
            ignored.push(a.clone());
            i += 1;
            continue;
        }
        match key {
            "-Xcompiler" | "--compiler-options" => {
                let v = if joined {
                    a.split_once('=')
                        .map(|x| x.1.to_string())
                        .unwrap_or_default()
                } else {
                    i += 1;
                    argv.get(i).cloned().unwrap_or_default()
                };
                out.extend(v.split(',').filter(|s| !s.is_empty()).map(str::to_string));
            }
            "-Xlinker" | "--linker-options" if joined => {
                let v = a.split_once('=').map(|x| x.1).unwrap_or("");
                out.extend(v.split(',').map(|s| format!("-Wl,{s}")));
            }
            "--std" | "-std" if !joined => {
                i += 1;
                out.push(format!("-std={}", argv.get(i).cloned().unwrap_or_default()));
            }
            "--std" => out.push(format!("-std={}", &a[6..])),
            "-dc" | "--device-c" => out.push("-c".into()),
            "--compile" => out.push("-c".into()),
            "--output-file" => {
                i += 1;
                out.push("-o".into());
                out.push(argv.get(i).cloned().unwrap_or_default());
            }
            "--include-path" => {
                i += 1;
                out.push(format!("-I{}", argv.get(i).cloned().unwrap_or_default()));
            }
            "--define-macro" => {
                i += 1;
                out.push(format!("-D{}", argv.get(i).cloned().unwrap_or_default()));
            }
            _ => out.push(a.clone()),
        }
        i += 1;
    }
    (out, ignored)
}

fn parse_args(argv: &[String]) -> Args {
    let (argv, ignored) = normalize_nvcc(argv);
    let argv = &argv[..];
    let mut a = Args {
        ignored,
        ..Args::default()
    };
    let mut i = 0;
    // Flags that take the next argument as their value.
    let with_value = [
        "-o",
        "-I",
        "-D",
        "-U",
        "-include",
        "-isystem",
        "-iquote",
        "-idirafter",
        "-MF",
        "-MT",
        "-MQ",
        "-L",
        "-l",
        "-Xlinker",
        "-imacros",
        "-x",
    ];
    let parse_relevant = [
        "-I",
        "-D",
        "-U",
        "-include",
        "-isystem",
        "-iquote",
        "-idirafter",
        "-imacros",
    ];
    while i < argv.len() {
        let arg = &argv[i];
        match arg.as_str() {
            "--kernel-report" => {
                a.report = true;
                i += 1;
                continue;
            }
            "--fibers" => {
                a.fibers = true;
                i += 1;
                continue;
            }
            "--keep" | "-save-temps" => {
                a.keep = true;
                if arg == "-save-temps" {
                    a.items.push(Item::Flag(arg.clone()));
                }
                i += 1;
                continue;
            }
            "-v" => a.verbose = true,
            "-c" | "-S" => a.compile_only = true,
            "-E" | "-M" | "-MM" => a.preprocess_only = true,
            _ => {}
        }
        if with_value.contains(&arg.as_str()) && i + 1 < argv.len() {
            let v = &argv[i + 1];
            if arg == "-x" {
                a.forced = match v.as_str() {
                    "c" => Some(Lang::C),
                    "c++" => Some(Lang::Cxx),
                    "cu" | "cuda" => Some(Lang::Cuda),
                    _ => None,
                };
            }
            if parse_relevant.contains(&arg.as_str()) {
                a.parse_flags.push(arg.clone());
                a.parse_flags.push(v.clone());
            }
            if arg == "-x" && a.forced == Some(Lang::Cuda) {
                i += 2;
                continue;
            }
            a.items.push(Item::Flag(arg.clone()));
            a.items.push(Item::Flag(v.clone()));
            i += 2;
            continue;
        }
        if arg.starts_with('-') {
            // What changes how the source reads; not code generation (-O, -march, -fopt-info:
            // flags libclang may not know, and an unknown one would stop it).
            let language_f = [
                "-fopenmp",
                "-fsigned-char",
                "-funsigned-char",
                "-fshort-enums",
                "-fshort-wchar",
                "-fms-extensions",
                "-fexceptions",
                "-fno-exceptions",
                "-frtti",
                "-fno-rtti",
                "-fcommon",
                "-fno-common",
                "-fgnu89-inline",
            ];
            let relevant = parse_relevant
                .iter()
                .any(|p| arg.starts_with(p) && arg.len() > p.len())
                || arg.starts_with("-std=")
                || arg == "-pthread"
                || arg == "-ansi"
                || language_f.contains(&arg.as_str());
            if relevant {
                a.parse_flags.push(arg.clone());
            }
            a.items.push(Item::Flag(arg.clone()));
        } else {
            let lang = a.forced.or_else(|| lang_of(arg));
            match lang {
                Some(l) => {
                    a.any_input = true;
                    if l != Lang::C {
                        a.any_cxx = true;
                    }
                    if l == Lang::Cuda {
                        a.any_cuda = true;
                    }
                    a.items.push(Item::Source(arg.clone(), l));
                }
                None => {
                    a.any_input = true;
                    a.items.push(Item::Flag(arg.clone()));
                }
            }
        }
        i += 1;
    }
    a
}

/// Where BIREN's header and library are: next to this executable in a build tree
/// (target/release/biren-cc, include/ two levels up) or an installed prefix (bin/, include/, lib/).
fn biren_dirs() -> (PathBuf, PathBuf) {
    let env_inc = std::env::var_os("BIREN_CC_INCLUDE").map(PathBuf::from);
    let env_lib = std::env::var_os("BIREN_CC_LIBDIR").map(PathBuf::from);
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .unwrap_or_default();
    let dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let candidates = [
        (dir.join("../../include"), dir.clone()),
        (dir.join("../include"), dir.join("../lib")),
        (dir.join("../include"), dir.join("../lib64")),
        (dir.join("../include"), dir.join("../lib/x86_64-linux-gnu")),
        (dir.join("../include"), dir.join("../lib/aarch64-linux-gnu")),
    ];
    let mut found = candidates
        .iter()
        .find(|(i, l)| i.join("biren_runtime.h").exists() && l.join("libbiren_runtime.so").exists())
        .cloned()
        .unwrap_or_else(|| candidates[1].clone());
    if let Some(i) = env_inc {
        found.0 = i;
    }
    if let Some(l) = env_lib {
        found.1 = l;
    }
    let canon = |p: PathBuf| p.canonicalize().unwrap_or(p);
    (canon(found.0), canon(found.1))
}

/// The system compiler for `lang`: `CC`/`CXX`, unless it names biren-cc itself (CC=biren-cc in
/// a Makefile or for CMake), then `cc`/`c++`.
fn compiler(lang: Lang) -> String {
    let (var, default) = match lang {
        Lang::C => ("CC", "cc"),
        Lang::Cxx | Lang::Cuda => ("CXX", "c++"),
    };
    let Some(chosen) = std::env::var(var).ok().filter(|s| !s.trim().is_empty()) else {
        return default.into();
    };
    let first = chosen.split_whitespace().next().unwrap_or("").to_string();
    let me = std::env::current_exe().and_then(|p| p.canonicalize()).ok();
    let resolved = if first.contains('/') {
        Path::new(&first).canonicalize().ok()
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(&first))
                .find(|p| p.is_file())
                .and_then(|p| p.canonicalize().ok())
        })
    };
    let is_me = Path::new(&first)
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("biren-cc"))
        || (resolved.is_some() && resolved == me);
    if is_me || std::env::var_os("BIREN_CC_ACTIVE").is_some() {
        default.into()
    } else {
        chosen
    }
}

/// Translates one source; returns the path of the translated file, or None to compile the
/// user's own file (nothing to change, or the front end could not read it).
fn translate(
    path: &str,
    lang: Lang,
    args: &Args,
    include: &Path,
    tmp: &Path,
    out_dir_for_keep: Option<&Path>,
) -> Result<Option<PathBuf>, String> {
    let src = std::fs::read(path).map_err(|e| format!("biren-cc: {path}: {e}"))?;
    // Nothing to do without kernels: no parse.
    if !src.windows(12).any(|w| w == b"BIREN_KERNEL") {
        return Ok(None);
    }
    regions(path, src, lang, &[], args, include, tmp, out_dir_for_keep)
}

/// A CUDA source: translated to C++ (cuda.rs), then as a C++ source. Always gives a file:
/// the system compiler cannot read CUDA.
fn translate_cuda(
    path: &str,
    args: &Args,
    include: &Path,
    tmp: &Path,
    out_dir_for_keep: Option<&Path>,
) -> Result<PathBuf, String> {
    let src = std::fs::read(path).map_err(|e| format!("biren-cc: {path}: {e}"))?;
    clang::load()?;
    let cuda_inc = include.join("cuda");
    let mut flags: Vec<String> = vec![
        "-x".into(),
        "cuda".into(),
        "--cuda-host-only".into(),
        "-nocudainc".into(),
        "-nocudalib".into(),
        // Kernels call printf and the C library, as CUDA's device library lets them.
        "-Xclang".into(),
        "-fcuda-allow-variadic-functions".into(),
    ];
    flags.extend(cuda_flags(args, include));
    flags.push("-include".into());
    flags.push("cuda_runtime.h".into());
    flags.extend(system_compiler_flags());
    flags.push("-Wno-everything".into());
    let unit = clang::Unit::parse(path, &flags)?;
    let errors = unit.errors();
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("{}:{}: error: {}", e.file, e.line, e.text);
        }
        return Err(format!(
            "biren-cc: {path}: the CUDA front end found {} error(s)",
            errors.len()
        ));
    }
    let _ = cuda_inc;
    let t = cuda::translate(&unit, &src, path, &include.display().to_string())?;
    // Headers of the program that hold kernels, launches or device variables: translated
    // copies beside the translated source, where its quoted #include finds them first.
    let main_dir = Path::new(path)
        .parent()
        .map(|d| {
            if d.as_os_str().is_empty() {
                Path::new(".")
            } else {
                d
            }
        })
        .and_then(|d| d.canonicalize().ok());
    for (other, text) in &t.others {
        if args.verbose {
            eprintln!("biren-cc: {other}: translated too");
        }
        let canon = Path::new(other).canonicalize().ok();
        let rel = match (&main_dir, &canon) {
            (Some(d), Some(o)) => o.strip_prefix(d).ok().map(Path::to_path_buf),
            _ => None,
        };
        let Some(rel) = rel else {
            return Err(format!(
                "biren-cc: {other}: kernels, launches or device variables in a header outside {path}'s directory are not supported; include it from a file beside it"
            ));
        };
        let dst = tmp.join(&rel);
        if let Some(p) = dst.parent() {
            let _ = std::fs::create_dir_all(p);
        }
        std::fs::write(&dst, text).map_err(|e| format!("biren-cc: {}: {e}", dst.display()))?;
    }
    // What nvcc puts before every .cu source: CUDA's macros and cuda_runtime.h.
    let text = format!(
        "#define __CUDACC__ 1\n#define __NVCC__ 1\n#define __CUDACC_VER_MAJOR__ 12\n#define __CUDACC_VER_MINOR__ 4\n#include \"cuda_runtime.h\"\n#line 1 \"{}\"\n{}",
        path.replace('\\', "\\\\").replace('"', "\\\""),
        t.text
    );
    let base = Path::new(path)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unit.cu".into());
    let out = tmp.join(format!("{base}.cpp"));
    std::fs::write(&out, &text).map_err(|e| format!("biren-cc: {}: {e}", out.display()))?;
    if let Some(dir) = out_dir_for_keep {
        let stem = Path::new(&base)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let _ = std::fs::write(dir.join(format!("{stem}.biren.cu.cpp")), &text);
    }
    let stage2 = tmp.join("regions");
    let _ = std::fs::create_dir_all(&stage2);
    // The translation is read from the temporary directory: the program's quoted includes are
    // looked up where the final compilation finds them (its translated headers first, then
    // beside the user's file), or the kernels would not parse and keep the fiber form.
    let user_dir = match Path::new(path).parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut extra = vec![
        format!("-iquote{}", tmp.display()),
        format!("-iquote{}", user_dir.display()),
    ];
    extra.extend(cuda_flags(args, include));
    extra.extend(system_compiler_flags());
    let out_str = out.display().to_string();
    match regions(
        &out_str,
        text.into_bytes(),
        Lang::Cxx,
        &extra,
        args,
        include,
        &stage2,
        out_dir_for_keep,
    )? {
        Some(p) => Ok(p),
        None => Ok(out),
    }
}

/// The system compiler's own headers (omp.h, ...), which libclang does not know, for reading
/// a CUDA source or its translation.
fn system_compiler_flags() -> Vec<String> {
    match system_compiler_include() {
        // GCC's omp.h names a deallocator in __malloc__(f), which clang does not read.
        Some(dir) => vec![
            "-idirafter".into(),
            dir,
            "-D__malloc__(...)=__malloc__".into(),
        ],
        None => Vec::new(),
    }
}

/// The system C++ compiler's own include directory (`-print-file-name=include`), if it says.
fn system_compiler_include() -> Option<String> {
    let out = Command::new(compiler(Lang::Cxx))
        .arg("-print-file-name=include")
        .env("BIREN_CC_ACTIVE", "1")
        .output()
        .ok()?;
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && Path::new(&dir).is_dir()).then_some(dir)
}

/// Flags for reading a CUDA source (or its translation): CUDA's headers first, the user's.
fn cuda_flags(args: &Args, include: &Path) -> Vec<String> {
    let mut f = vec![
        format!("-I{}", include.join("cuda").display()),
        format!("-I{}", include.display()),
        "-D__CUDACC__".to_string(),
        "-D__NVCC__".to_string(),
    ];
    // Not -fopenmp: libclang's cursors do not go into OpenMP's captured regions, where a
    // program may launch kernels; without it the pragmas are ignored and the code is read.
    f.extend(
        args.parse_flags
            .iter()
            .filter(|a| !a.starts_with("-fopenmp"))
            .cloned(),
    );
    if !args.parse_flags.iter().any(|a| a.starts_with("-std=")) {
        f.push("-std=c++17".into());
    }
    f
}

/// The second stage: kernels with barriers in region form (kernel.rs, emit.rs).
#[allow(clippy::too_many_arguments)]
fn regions(
    path: &str,
    src: Vec<u8>,
    lang: Lang,
    extra: &[String],
    args: &Args,
    include: &Path,
    tmp: &Path,
    out_dir_for_keep: Option<&Path>,
) -> Result<Option<PathBuf>, String> {
    if args.fibers {
        return Ok(None);
    }
    clang::load()?;
    let mut flags: Vec<String> = vec![
        "-x".into(),
        if lang == Lang::C {
            "c".into()
        } else {
            "c++".into()
        },
    ];
    if extra.is_empty() {
        flags.extend(args.parse_flags.iter().cloned());
    } else {
        flags.extend(extra.iter().cloned());
    }
    flags.push(format!("-I{}", include.display()));
    // What GCC predefines and libclang may not: neither changes a BIREN program's meaning.
    flags.push("-Wno-everything".into());
    let unit = clang::Unit::parse(path, &flags)?;
    let errors = unit.errors();
    let kernels = kernel::find(&unit.root(), &src);
    if args.report {
        for k in &kernels {
            // A unit the front end could not read whole is compiled as written (below): its
            // analysis saw a tree with the unreadable statements left out.
            if let Some(e) = errors.first() {
                eprintln!(
                    "biren-cc: kernel {}: fibers (the front end read an error: {} at {}:{})",
                    k.name, e.text, e.file, e.line
                );
                continue;
            }
            let line = match &k.plan {
                Ok(p) => format!("biren-cc: kernel {}: loops ({} regions)", k.name, p.regions),
                Err(_) if !k.has_barrier => {
                    format!("biren-cc: kernel {}: loops (1 regions)", k.name)
                }
                Err(f) => {
                    let (file, l) = text::user_line(&src, f.offset, path);
                    format!(
                        "biren-cc: kernel {}: fibers ({} at {file}:{l})",
                        k.name, f.reason
                    )
                }
            };
            eprintln!("{line}");
        }
    }
    if !errors.is_empty() {
        if args.verbose {
            for e in &errors {
                eprintln!("biren-cc: the front end read an error at {}:{}: {}; compiling as written (fiber form)", e.file, e.line, e.text);
            }
        }
        return Ok(None);
    }
    if !kernels.iter().any(|k| k.plan.is_ok()) {
        return Ok(None);
    }
    let translated = emit::unit(&src, path, &kernels);
    let base = Path::new(path)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unit.c".into());
    let out = tmp.join(&base);
    std::fs::write(&out, &translated).map_err(|e| format!("biren-cc: {}: {e}", out.display()))?;
    if let Some(dir) = out_dir_for_keep {
        let stem = Path::new(&base)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ext = Path::new(&base)
            .extension()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "c".into());
        let _ = std::fs::write(dir.join(format!("{stem}.biren.{ext}")), &translated);
    }
    Ok(Some(out))
}

fn run() -> Result<i32, String> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() {
        eprintln!("{USAGE}");
        return Ok(2);
    }
    if argv.iter().any(|a| a == "--help") {
        println!("{HELP}");
        return Ok(0);
    }
    if argv.iter().any(|a| a == "--version") {
        println!("biren-cc {}", env!("CARGO_PKG_VERSION"));
    }
    let args = parse_args(&argv);
    let (include, libdir) = biren_dirs();
    let tmp = std::env::temp_dir().join(format!("biren-cc-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&tmp);
    let keep_dir = args.keep.then(|| PathBuf::from("."));
    // A link of object files only (the second step of `-c` builds) may hold C++ or CUDA units:
    // the C++ driver links them, as nvcc does; it links C objects alike.
    let any_c_source = args
        .items
        .iter()
        .any(|i| matches!(i, Item::Source(_, Lang::C)));
    let driver = if args.any_cxx || (!args.compile_only && !any_c_source) {
        Lang::Cxx
    } else {
        Lang::C
    };
    let mut cmd_args: Vec<String> = Vec::new();
    let mut quote_dirs: Vec<String> = Vec::new();
    let mut n = 0;
    for item in &args.items {
        match item {
            Item::Flag(f) => cmd_args.push(f.clone()),
            Item::Source(p, lang) => {
                let translated = if *lang == Lang::Cuda {
                    let dir = tmp.join(n.to_string());
                    n += 1;
                    let _ = std::fs::create_dir_all(&dir);
                    // The program's headers that were translated too are found there first.
                    quote_dirs.push(format!("-iquote{}", dir.display()));
                    Some(translate_cuda(
                        p,
                        &args,
                        &include,
                        &dir,
                        keep_dir.as_deref(),
                    )?)
                } else if args.preprocess_only {
                    None
                } else {
                    // Each source in a directory of its own: two inputs may share a name.
                    let dir = tmp.join(n.to_string());
                    n += 1;
                    let _ = std::fs::create_dir_all(&dir);
                    translate(p, *lang, &args, &include, &dir, keep_dir.as_deref())?
                };
                // The C++ driver (a command that also holds C++ or CUDA) would read a `.c` file
                // as C++: a C source stays C, as with nvcc and gcc.
                let as_c = *lang == Lang::C && driver == Lang::Cxx;
                if as_c {
                    cmd_args.push("-x".into());
                    cmd_args.push("c".into());
                }
                match translated {
                    Some(t) => {
                        // Quoted includes are looked up beside the user's file, as before.
                        let d = Path::new(p).parent().map(|d| {
                            if d.as_os_str().is_empty() {
                                Path::new(".")
                            } else {
                                d
                            }
                        });
                        if let Some(d) = d {
                            quote_dirs.push(format!("-iquote{}", d.display()));
                        }
                        cmd_args.push(t.display().to_string());
                    }
                    None => cmd_args.push(p.clone()),
                }
                if as_c {
                    cmd_args.push("-x".into());
                    cmd_args.push("none".into());
                }
            }
        }
    }
    let cc = compiler(driver);
    let mut full: Vec<String> = Vec::new();
    full.extend(quote_dirs);
    full.extend(cmd_args);
    if args.any_cuda {
        full.push(format!("-I{}", include.join("cuda").display()));
        // C++17 at least, as nvcc 12 uses; not where a C source shares the command (the one
        // flag would reach its C compilation too; g++ from 11 and clang++ from 16 default to
        // gnu++17 anyway).
        if !any_c_source
            && !args
                .items
                .iter()
                .any(|i| matches!(i, Item::Flag(f) if f.starts_with("-std=")))
        {
            full.push("-std=c++17".into());
        }
    }
    full.push(format!("-I{}", include.display()));
    if args.verbose {
        for i in &args.ignored {
            eprintln!("biren-cc: ignored (nvcc's, about accelerator code): {i}");
        }
    }
    let linking = !args.compile_only && !args.preprocess_only && args.any_input;
    if linking {
        full.push(format!("-L{}", libdir.display()));
        full.push(format!("-Wl,-rpath,{}", libdir.display()));
        full.push("-lbiren_runtime".into());
        full.push("-lm".into());
        full.push("-pthread".into());
    }
    if args.verbose {
        eprintln!("biren-cc: {} {}", cc, full.join(" "));
    }
    // A compiler that is a wrapper running biren-cc again (a script) runs the system's.
    let status = Command::new(&cc)
        .args(&full)
        .env("BIREN_CC_ACTIVE", "1")
        .status()
        .map_err(|e| format!("biren-cc: cannot run {cc}: {e}"))?;
    if !args.keep {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(status.code().unwrap_or(1))
}

fn main() {
    match run() {
        Ok(code) => exit(code),
        Err(e) => {
            eprintln!("{e}");
            exit(1)
        }
    }
}
