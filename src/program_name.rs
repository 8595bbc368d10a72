//! A program as a person calls it: its file name without the folder (either
//! separator: a Windows config is read anywhere) or an executable extension —
//! `npx` for `C:\nodejs\npx.cmd`. Errors name a server so; launchers are
//! recognised so.

/// `program`'s name, its case kept.
pub(crate) fn program_name(program: &str) -> &str {
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let executable = [".exe", ".cmd", ".bat", ".com", ".ps1"].iter().find(|ext| {
        name.len() > ext.len()
            && name.is_char_boundary(name.len() - ext.len())
            && name[name.len() - ext.len()..].eq_ignore_ascii_case(ext)
    });
    match executable {
        Some(ext) => &name[..name.len() - ext.len()],
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::program_name;

    #[test]
    fn a_program_is_named_by_its_file_name_without_an_executable_extension() {
        assert_eq!(program_name("npx"), "npx");
        assert_eq!(program_name("/usr/bin/python3.11"), "python3.11");
        assert_eq!(program_name("C:/nodejs/npx.CMD"), "npx");
        assert_eq!(program_name(r"C:\nodejs\npx.cmd"), "npx");
        assert_eq!(program_name("stdio-mcp-peer.exe"), "stdio-mcp-peer");
        assert_eq!(program_name("tool.ps1"), "tool");
        assert_eq!(program_name(".exe"), ".exe");
    }
}
