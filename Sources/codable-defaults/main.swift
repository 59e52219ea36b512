// codable-defaults: reads, writes, checks and watches CodableDefaults store files. See `Help.general`.

let tool = Tool()
let input = CommandLineInput.current()
let status = tool.run(input.arguments, notUTF8: input.notUTF8)
tool.exit(with: status)
