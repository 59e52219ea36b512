// codable-defaults: reads, writes, checks and watches CodableDefaults store files. See `HelpText.general`.

let tool = Tool()
let input = CommandLineInput.current()
tool.exit(with: tool.run(input.arguments, notUTF8: input.notUTF8))
