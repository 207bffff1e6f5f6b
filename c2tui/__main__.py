from c2tui.cli import main

main()
