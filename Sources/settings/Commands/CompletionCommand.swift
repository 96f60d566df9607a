/// `settings completion bash|zsh|fish`: a shell completion script, made from the commands'
/// own help texts (their names, summaries and the options their usage names), so it cannot
/// list a command or option the tool does not have.
enum CompletionCommand: Command {
    static let name = "completion"
    static let summary = "print a shell completion script (bash, zsh or fish)"
    static let usage = """
        usage: settings completion bash|zsh|fish

        Prints a completion script for the shell: commands, plutil's forms, each command's options,
        and for a DOMAIN argument the domains on this machine (the script runs 'settings domains'
        each time it completes one, so a domain created later completes too) and file names.
          bash   eval "$(settings completion bash)"                       (in ~/.bashrc)
          zsh    settings completion zsh > ~/.zfunc/_settings  with ~/.zfunc in $fpath
                 before compinit (or: source <(settings completion zsh), after compinit)
          fish   settings completion fish > ~/.config/fish/completions/settings.fish
        """

    static func run(_ arguments: [String]) throws(CLIError) {
        let positional = try plainArguments(arguments, command: name)
        guard positional.count == 1 else { throw .usage("completion: expected bash, zsh or fish") }
        switch positional[0] {
        case "bash": Console.print(bash)
        case "zsh": Console.print(zsh)
        case "fish": Console.print(fish)
        default: throw .usage("completion: unknown shell '\(positional[0])' (use bash, zsh or fish)")
        }
    }

    /// What a script completes for one command.
    struct Spec {
        let name: String
        let summary: String
        /// The options its usage names (`-o`, `--json`), and `--help`.
        let options: [String]
        /// Whether its first argument is a DOMAIN.
        let takesDomain: Bool
        /// Words its usage lists as choices (`xml1|binary1|json`).
        let words: [String]
        /// Its name and its plutil spellings (`convert`, `-convert`).
        let names: [String]
    }

    /// Options every command takes: `--show-secrets` anywhere on the line, `--help`.
    static let everywhere = ["--help", "--show-secrets"]

    static var specs: [Spec] {
        SettingsTool.commands.map { command in
            let forms = Set(SettingsTool.plutilForms.keys)
            let options = optionNames(in: command.usage).filter { !forms.contains($0) }
            let firstLine = command.usage.split(separator: "\n").first.map(String.init) ?? ""
            let words = firstLine.split(separator: " ").filter { $0.contains("|") && !$0.contains("[") && !$0.hasPrefix("-") }
                .flatMap { $0.split(separator: "|").map(String.init) }
            let names = [command.name] + forms.sorted().filter { SettingsTool.plutilForms[$0]?.command.name == command.name }
            return Spec(name: command.name, summary: command.summary, options: unique(options + everywhere),
                        takesDomain: firstLine.split(separator: " ").contains("DOMAIN"), words: words, names: names)
        }
    }

    /// The top-level words: commands, plutil's forms, `--help`, `--version`.
    static var topLevel: [String] {
        SettingsTool.commands.map { $0.name } + SettingsTool.plutilForms.keys.sorted() + ["--help", "--version"]
    }

    /// Every option-like word of `text`: a `-` or `--` followed by lowercase letters, digits and
    /// dashes, standing alone (`-o`, `--typed-json`, `-append`; not `-TYPE`, `non-UTF-8`, `1e-07`).
    static func optionNames(in text: String) -> [String] {
        var found: [String] = []
        var word = ""
        func flush() {
            defer { word = "" }
            let body = word.drop { $0 == "-" }
            guard word.hasPrefix("-"), word.count - body.count <= 2, let first = body.first, first.isLowercase,
                  body.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" }), body.last != "-" else { return }
            found.append(word)
        }
        for c in text {
            if c.isLetter || c.isNumber || c == "-" { word.append(c) } else { flush() }
        }
        flush()
        return unique(found)
    }

    static func unique(_ words: [String]) -> [String] {
        var seen = Set<String>()
        return words.filter { seen.insert($0).inserted }
    }

    // MARK: The scripts

    static var bash: String {
        var cases = ""
        for spec in specs {
            cases += "        \(spec.names.joined(separator: "|"))) flags='\(spec.options.joined(separator: " "))'; choices='\(spec.words.joined(separator: " "))'; domain=\(spec.takesDomain ? 1 : 0) ;;\n"
        }
        return """
            # bash completion for settings (made by 'settings completion bash'; from the tool's help texts)
            _settings_domains() {
                local listed
                listed=$("$1" domains 2>/dev/null) || return 0
                [[ -n $listed ]] && printf '%s\\n' "${listed//, /$'\\n'}"
            }
            _settings() {
                local cur=${COMP_WORDS[COMP_CWORD]} command=${COMP_WORDS[1]} flags='' choices='' domain=0 i position=0
                if (( COMP_CWORD == 1 )); then
                    COMPREPLY=($(compgen -W '\(topLevel.joined(separator: " "))' -- "$cur"))
                    return
                fi
                case $command in
            \(cases)    esac
                if [[ $cur == -* ]]; then
                    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
                    return
                fi
                for (( i = 2; i < COMP_CWORD; i++ )); do [[ ${COMP_WORDS[i]} == -* ]] || (( position++ )); done
                local IFS=$'\\n'
                COMPREPLY=()
                if (( domain && position == 0 )); then
                    COMPREPLY=($(compgen -W "$(_settings_domains "${COMP_WORDS[0]}")" -- "$cur"))
                fi
                [[ -n $choices ]] && COMPREPLY+=($(IFS=' '; compgen -W "$choices" -- "$cur"))
                COMPREPLY+=($(compgen -f -- "$cur"))
            }
            complete -o filenames -F _settings settings
            """
    }

    static var zsh: String {
        func quoted(_ text: String) -> String { "'" + text.replacing("'", with: "'\\''") + "'" }
        var commands = ""
        for spec in specs { commands += "        \(quoted(spec.name.replacing(":", with: "\\:") + ":" + spec.summary))\n" }
        for form in SettingsTool.plutilForms.keys.sorted() { commands += "        \(quoted(form + ":plutil's " + form))\n" }
        var cases = ""
        for spec in specs {
            cases += "        \(spec.names.joined(separator: "|"))) flags=(\(spec.options.joined(separator: " "))); choices=(\(spec.words.joined(separator: " "))); domain=\(spec.takesDomain ? 1 : 0) ;;\n"
        }
        return """
            #compdef settings
            # zsh completion for settings (made by 'settings completion zsh'; from the tool's help texts)
            _settings() {
                local -a commands flags choices domains
                local domain=0 position=0 i
                commands=(
            \(commands)        '--help:print the help'
                    '--version:print the version'
                )
                if (( CURRENT == 2 )); then
                    _describe -t commands 'settings command' commands
                    return
                fi
                case $words[2] in
            \(cases)    esac
                if [[ $PREFIX == -* ]]; then
                    compadd -- $flags
                    return
                fi
                for (( i = 3; i < CURRENT; i++ )); do [[ $words[i] == -* ]] || (( position++ )); done
                if (( domain && position == 0 )); then
                    domains=(${(s:, :)"$($words[1] domains 2>/dev/null)"})
                    compadd -- $domains
                fi
                (( $#choices )) && compadd -- $choices
                _files
            }
            if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
                _settings "$@"
            else
                compdef _settings settings
            fi
            """
    }

    static var fish: String {
        /// fish's spelling of an option: `-l json` (`--json`), `-s o` (`-o`), `-o append` (`-append`).
        func flag(_ option: String) -> String {
            option.hasPrefix("--") ? "-l \(option.dropFirst(2))" : option.count == 2 ? "-s \(option.dropFirst())" : "-o \(option.dropFirst())"
        }
        func quoted(_ text: String) -> String { "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'" }
        var lines = [
            "# fish completion for settings (made by 'settings completion fish'; from the tool's help texts)",
            "function __settings_domains",
            "    set -l tool (commandline -opc)[1]",
            "    $tool domains 2>/dev/null | string split ', ' | string match -v ''",
            "end",
            "function __settings_needs_command",
            "    test (count (commandline -opc)) -eq 1",
            "end",
            "function __settings_first_argument_of",
            "    set -l words (commandline -opc)",
            "    contains -- $words[2] $argv; or return 1",
            "    for word in $words[3..-1]",
            "        string match -q -- '-*' $word; or return 1",
            "    end",
            "end",
        ]
        for spec in specs {
            lines.append("complete -c settings -n __settings_needs_command -f -a \(spec.name) -d \(quoted(spec.summary))")
        }
        for form in SettingsTool.plutilForms.keys.sorted() {
            lines.append("complete -c settings -n __settings_needs_command \(flag(form)) -d \(quoted("plutil's " + form))")
        }
        lines.append("complete -c settings -n __settings_needs_command -l version -d 'print the version'")
        lines.append("complete -c settings -n __settings_needs_command -l help -d 'print the help'")
        for spec in specs {
            let condition = "'__fish_seen_subcommand_from \(spec.names.joined(separator: " "))'"
            for option in spec.options {
                lines.append("complete -c settings -n \(condition) \(flag(option))")
            }
            if !spec.words.isEmpty {
                lines.append("complete -c settings -n \(condition) -a \(quoted(spec.words.joined(separator: " ")))")
            }
        }
        let domainCommands = specs.filter(\.takesDomain).flatMap(\.names).joined(separator: " ")
        lines.append("complete -c settings -n '__settings_first_argument_of \(domainCommands)' -a '(__settings_domains)' -d domain")
        return lines.joined(separator: "\n")
    }
}
