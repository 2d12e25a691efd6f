import streamlit as st

st.title("train_eval")
st.write("Being built.")
