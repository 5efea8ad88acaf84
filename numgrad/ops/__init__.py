"""Operations: the op table and the code that applies its entries to tensors."""
