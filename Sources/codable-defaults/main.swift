// codable-defaults: reads, writes, checks and watches CodableDefaults store files. See `Help.general`.

let tool = Tool()
let status = tool.run(Array(CommandLine.arguments.dropFirst()))
tool.exit(with: status)
