from c2tui.commands import main

main()
