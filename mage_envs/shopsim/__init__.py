"""ShopSim: a generated shop with WebShop's protocol and reward, needing no download."""
