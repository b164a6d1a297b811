from model_checks.cli import main

main()
