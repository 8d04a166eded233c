from howtobench.cli.main import main

main()
