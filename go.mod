module akk

go 1.26
